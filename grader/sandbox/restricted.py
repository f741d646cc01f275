"""The subset's runtime guard: the candidate's module runs with builtins the judge chose. INSIDE the sandbox.

The judge decides what a submission may do from its source (``grader.subset.audit``),
before it runs. One thing the source cannot show is a name computed at run time:
``getattr(module, part, None)`` walking a dotted path, ``setattr(self, name, layer)``.
Those stay legal, and this guard makes the name safe, as RestrictedPython's guarded
builtins do: the candidate's module gets its own ``__builtins__`` mapping, in which

- ``getattr``/``hasattr``/``setattr``/``delattr`` refuse the names the judge's rules
  refuse when written out (a dunder outside the subset's list, a frame's or code
  object's internals, a forbidden API's name, a module's private ``_name``, a switch of
  torch's dispatch), and never hand back a module;
- ``__import__`` imports only what the exercise's subset allows;
- ``exec``, ``eval``, ``compile``, ``globals``, ``locals``, ``vars``, ``breakpoint`` and
  ``help`` are absent (the judge already refused any file that names them), and ``open``
  too unless the exercise allows it, then refusing ``/proc``, ``/sys`` and ``/dev``.

A refusal raises :class:`SubsetGuardRefused`; the judge reads the exception's type from
the worker's error record and turns it into a violation in its own words
(``grader.host.decision``), never quoting what the sandbox said.

Every process imports the candidate's module through this file: the staged
``subset/<module>.py`` (written by the judge, ``grader.backends.staging``) stands first
on ``sys.path`` and calls :func:`load`, so a probe's ``import attention``, a spawned
DDP rank and a DataLoader worker all get the guarded module. Like the worker, this
file imports the standard library only, and decides nothing: everything in the
sandbox is the candidate's to read once their module runs.
"""

from __future__ import annotations

import builtins
import fnmatch
import os
import sys
import types

#: Builtins no submission keeps (the judge refused any file naming them; absent, they cannot be reached either).
REMOVED = ("exec", "eval", "compile", "breakpoint", "globals", "locals", "vars", "help", "__loader__", "__spec__")
#: Paths ``open`` never reaches, even where an exercise allows files: the process's memory and the kernel's knobs.
REFUSED_PREFIXES = ("/proc", "/sys", "/dev")


class SubsetGuardRefused(Exception):
    """A name or an import outside the exercise's subset, refused at run time."""


class Guard:
    """The judge's lists, and the builtins made from them."""

    def __init__(self, lists: dict):
        self.dunders = frozenset(lists.get("dunders", ()))
        self.frames = frozenset(lists.get("frames", ()))
        self.refused = frozenset(lists.get("refused", ()))
        self.patterns = tuple(lists.get("patterns", ()))
        self.importable = tuple(lists.get("importable", ()))
        self.open_allowed = bool(lists.get("open", False))

    def name_refused(self, obj, name) -> bool:
        if type(name) is not str:
            return False  # the real builtin raises its own TypeError
        if name.startswith("__") and name.endswith("__") and len(name) > 4:
            return name not in self.dunders
        if name in self.frames or name in self.refused:
            return True
        if any(fnmatch.fnmatchcase(name, p) for p in self.patterns):
            return True
        return name.startswith("_") and isinstance(obj, types.ModuleType)

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

        def refuse(what: str):
            raise SubsetGuardRefused(what)

        def getattr(obj, name, *default):
            if guard.name_refused(obj, name):
                refuse("getattr")
            value = real.getattr(obj, name, *default)
            if isinstance(value, types.ModuleType):
                refuse("getattr")
            return value

        def hasattr(obj, name):
            if guard.name_refused(obj, name):
                refuse("hasattr")
            return real.hasattr(obj, name)

        def setattr(obj, name, value):
            if guard.name_refused(obj, name) or (isinstance(obj, types.ModuleType) and _is_code(obj, name)):
                refuse("setattr")
            return real.setattr(obj, name, value)

        def delattr(obj, name):
            if guard.name_refused(obj, name) or isinstance(obj, types.ModuleType):
                refuse("delattr")
            return real.delattr(obj, name)

        def __import__(name, globals=None, locals=None, fromlist=(), level=0):
            if level or type(name) is not str or not guard.import_allowed(name):
                refuse("import")
            return real.__import__(name, globals, locals, fromlist, level)

        namespace.update(getattr=getattr, hasattr=hasattr, setattr=setattr, delattr=delattr, __import__=__import__)
        if self.open_allowed:
            def open(file, *args, **kwargs):
                if not isinstance(file, int):
                    where = os.path.realpath(os.fspath(file))
                    if any(where == p or where.startswith(p + "/") for p in REFUSED_PREFIXES):
                        refuse("open")
                return real.open(file, *args, **kwargs)

            namespace["open"] = open
        return namespace


def _is_code(module, name) -> bool:
    current = module.__dict__.get(name)
    return callable(current) or isinstance(current, types.ModuleType)


def load(name: str, loader_file: str, lists: dict) -> types.ModuleType:
    """Run the candidate's ``submission/<name>.py`` as module ``name`` under the guard; put it in sys.modules.

    Called by the staged loader module of the same name while Python imports it: what is in
    ``sys.modules[name]`` when that import ends is what the importer gets.
    """
    stage = os.path.dirname(os.path.dirname(os.path.abspath(loader_file)))
    path = os.path.join(stage, "submission", f"{name}.py")
    with builtins.open(path, "rb") as f:
        source = f.read()
    module = types.ModuleType(name)
    module.__file__ = path
    module.__builtins__ = Guard(lists).builtins()
    code = builtins.compile(source, path, "exec", dont_inherit=True)
    sys.modules[name] = module
    try:
        builtins.exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module
