"""A forbidden package's ``import`` refused, and a removed API's source never loaded again (the imports part
of ``grader.sandbox.removal``).

The candidate's own ``import`` of a forbidden package fails. This is all absence can
mean for a standard-library package (``time``, ``threading``), which torch and the
worker use themselves; the judge refuses the import anyway. A module of a forbidden
torch package that is not loaded yet cannot be loaded at all, and no file a removed API
was defined in (its ``.py``, its cached ``.pyc``, a package's whole folder) can be opened,
under any path: an audit hook, which nothing in the process can remove, refuses every
route that would run it again as another module (a spec, a loader, ``runpy``, a copy).
Standard library only: it runs from the staged copy in the sandbox.
"""

from __future__ import annotations

import builtins
import linecache
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


def refuse_sources(sources: dict[str, str], error: type[OSError]) -> None:
    """``sources``: a file (or a folder, ending in the separator) -> the removed API it defines. Opening one,
    or a ``__pycache__`` file of one, raises ``error`` from now on, in this process and those it forks."""
    files = {p: api for p, api in sources.items() if not p.endswith(os.sep)}
    folders = tuple((p, api) for p, api in sources.items() if p.endswith(os.sep))
    caches = {(os.path.join(os.path.dirname(p), "__pycache__"), os.path.basename(p).rsplit(".", 1)[0]): api
              for p, api in files.items()}
    realpath, fsdecode = os.path.realpath, os.fsdecode

    def refused(path: str) -> str | None:
        if path in files:
            return files[path]
        for folder, api in folders:
            if path.startswith(folder):
                return api
        folder, name = os.path.split(path)
        return caches.get((folder, name.split(".", 1)[0]))

    def hook(event: str, args: tuple) -> None:
        if event not in _READS or not args or not isinstance(args[0], (str, bytes)):
            return  # a link or a rename would give the file a name no rule above knows
        try:
            path = realpath(fsdecode(args[0]))
        except (OSError, ValueError):
            return
        api = refused(path)
        if api is not None:
            raise error(f"the source of {api} is forbidden in this exercise: the grader removed it from the sandbox")

    for path in files:  # lines Python's line cache already read are a copy too
        linecache.cache.pop(path, None)
    sys.addaudithook(hook)


#: Audit events whose first argument is a path the event reads, or gives another name to.
_READS = frozenset({"open", "os.link", "os.rename", "shutil.copyfile", "shutil.copytree", "shutil.move"})


class _AbsentPackages:
    """A meta path finder: a module of a forbidden torch package that is not loaded yet cannot be."""

    def __init__(self, errors: dict[str, Callable]):
        self._errors = errors

    def find_spec(self, name, path=None, target=None):
        for package, raise_it in self._errors.items():
            if name == package or name.startswith(package + "."):
                raise_it()
        return None
