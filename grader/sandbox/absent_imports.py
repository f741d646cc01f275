"""A forbidden package's ``import`` refused in the sandbox (the imports part of ``grader.sandbox.removal``).

The candidate's own ``import`` of a forbidden package fails. This is all absence can
mean for a standard-library package (``time``, ``threading``), which torch and the
worker use themselves; the judge refuses the import anyway. A module of a forbidden
torch package that is not loaded yet cannot be loaded at all. Standard library only: it
runs from the staged copy in the sandbox.
"""

from __future__ import annotations

import builtins
import os
import sys
from typing import Callable


def refuse(errors: dict[str, Callable], candidate_dirs: list[str], *, torch_packages: set[str]) -> None:
    """The candidate's ``import`` of a package in ``errors`` (package -> what raises) fails; no new module of
    one of ``torch_packages`` loads at all.

    An import is the candidate's when the importing module's file lies in one of
    ``candidate_dirs``. Torch's own and the probes' imports of ``threading`` still work.
    """

    def refusal(name: str):
        for package, raise_it in errors.items():
            if name == package or name.startswith(package + "."):
                return raise_it
        return None

    original = builtins.__import__
    prefixes = tuple(os.path.join(d, "") for d in candidate_dirs)

    def __import__(name, globals=None, locals=None, fromlist=(), level=0):
        importer = globals.get("__file__") if isinstance(globals, dict) else None
        if prefixes and level == 0 and isinstance(importer, str) and os.path.realpath(importer).startswith(prefixes):
            for full in (name, *(f"{name}.{item}" for item in (fromlist or ()) if isinstance(item, str))):
                raise_it = refusal(full)
                if raise_it is not None:
                    raise_it()
        return original(name, globals, locals, fromlist, level)

    builtins.__import__ = __import__
    absent = {p: e for p, e in errors.items() if p in torch_packages}
    if absent:
        sys.meta_path.insert(0, _AbsentPackages(absent))


class _AbsentPackages:
    """A meta path finder: a module of a forbidden torch package that is not loaded yet cannot be."""

    def __init__(self, errors: dict[str, Callable]):
        self._errors = errors

    def find_spec(self, name, path=None, target=None):
        for package, raise_it in self._errors.items():
            if name == package or name.startswith(package + "."):
                raise_it()
        return None
