"""The candidate's module loaded as the judge rewrote it, with builtins the judge chose. INSIDE the sandbox.

The judge parsed the file, rewrote every attribute, item, call, iteration and ``with`` to go
through a guard (``grader.subset.rewrite``) and staged that tree beside the file as JSON
(``subset/<module>.json``). This compiles exactly that tree, under the file's own name (so
tracebacks show the candidate's lines), into a module whose ``__builtins__`` is a mapping of
its own: the guards (``grader.sandbox.guard_ops``, deciding by ``grader.sandbox.runtime_subset``),
guarded ``getattr``/``hasattr``/``setattr``/``delattr``, an ``__import__`` that imports only what
the subset allows, and no ``exec``, ``eval``, ``compile``, ``globals``, ``locals``, ``vars``,
``breakpoint`` or ``help`` (nor ``open`` unless the exercise allows it, then never under ``/proc``,
``/sys`` or ``/dev``).

Every process imports the candidate's module through this file: the staged ``subset/<module>.py``
stands first on ``sys.path`` and calls :func:`load`, so a probe's import, a spawned rank and a
DataLoader worker all get the guarded module. Standard library only; it decides nothing the
judge reads but the refusal's type (``SubsetGuardRefused``).
"""

from __future__ import annotations

import builtins
import fnmatch
import os
import sys
import types

from grader.sandbox import guard_ops
from grader.sandbox.runtime_subset import RuntimeSubset, SubsetGuardRefused, refuse
from grader.wire import module_ast

__all__ = ["Guard", "SubsetGuardRefused", "load"]

#: Builtins no submission keeps (the judge refused any file naming them; absent, they cannot be reached either).
REMOVED = ("exec", "eval", "compile", "breakpoint", "globals", "locals", "vars", "help", "__loader__", "__spec__")
#: Paths ``open`` never reaches, even where an exercise allows files: the process's memory and the kernel's knobs.
REFUSED_PREFIXES = ("/proc", "/sys", "/dev")


class Guard:
    """The judge's lists for one submission, and the builtins its module runs with."""

    def __init__(self, lists: dict, *, module: str = "", filename: str = ""):
        self.subset = RuntimeSubset(lists, module=module, filename=filename)
        self.importable = tuple(lists.get("importable", ()))
        self.open_allowed = bool(lists.get("open", False))

    def import_allowed(self, name: str) -> bool:
        return any(name == e or name.startswith(e + ".") or e.startswith(name + ".") for e in self.importable
                   if "*" not in e) or any(fnmatch.fnmatchcase(name, e) for e in self.importable if "*" in e)

    def builtins(self) -> dict:
        guard, real = self, builtins
        namespace = dict(vars(builtins))
        for name in REMOVED:
            namespace.pop(name, None)
        if not self.open_allowed:
            namespace.pop("open", None)

        def __import__(name, globals=None, locals=None, fromlist=(), level=0):
            if level or type(name) is not str or not guard.import_allowed(name):
                refuse("import")
            return real.__import__(name, globals, locals, fromlist, level)

        namespace.update(guard_ops.operations(self.subset), __import__=__import__)
        if self.open_allowed:
            def open(file, *args, **kwargs):
                if not isinstance(file, int):
                    where = os.path.realpath(os.fspath(file))
                    if any(where == p or where.startswith(p + "/") for p in REFUSED_PREFIXES):
                        refuse("open")
                return real.open(file, *args, **kwargs)

            namespace["open"] = open
        return namespace


def load(name: str, loader_file: str, lists: dict) -> types.ModuleType:
    """Run the judge's rewrite of ``submission/<name>.py`` as module ``name``; put it in ``sys.modules``.

    Called by the staged loader module of the same name while Python imports it: what is in
    ``sys.modules[name]`` when that import ends is what the importer gets.
    """
    here = os.path.dirname(os.path.abspath(loader_file))
    path = os.path.join(os.path.dirname(here), "submission", f"{name}.py")
    with builtins.open(os.path.join(here, f"{name}.json"), "rb") as f:
        tree = module_ast.decode(f.read())
    module = types.ModuleType(name)
    module.__file__ = path
    module.__builtins__ = Guard(lists, module=name, filename=path).builtins()
    code = builtins.compile(tree, path, "exec", dont_inherit=True)
    sys.modules[name] = module
    try:
        builtins.exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module
