"""The subset at run time: what each guarded operation of a rewritten submission may do. INSIDE the sandbox.

The judge rewrote the module so every attribute, item, call result, iteration and ``with``
calls one of these guards (``grader.wire.guarded``), and sent the lists they read
(``grader.subset.guard``). A guard refuses, whatever path produced the value:

- a name outside the subset: a dunder off the list, frame or code internals, torch's dispatch
  switches, a private name of an object the candidate did not create (its own classes, their
  instances and its own functions are its; torch's, the standard library's and the probes' are not);
- a value outside it: a module the subset does not allow, a frame, code object or traceback,
  a module's namespace or the builtins mapping, a function or class of a module no exercise may
  allow (``os``, ``sys``, ``importlib``, ``pickle``...), code-running builtins, a forbidden API
  reached under a name that is not its own (its own name is the judge's audit's to count);
- a write that patches code: a module's functions, or anything of a class or function not the candidate's.

Standard library only (torch is looked up in ``sys.modules``): it is staged into the sandbox.
"""

from __future__ import annotations

import builtins
import fnmatch
import sys
import types

from grader.wire import guarded as G

#: Values no guard ever needs to look into: plain data and torch's own value types (added when torch is loaded).
_PLAIN = {int, float, bool, str, bytes, type(None), complex, tuple, list, set, frozenset, slice, range, bytearray}
#: What reaches a frame, code or a traceback.
_INTERNALS = (types.FrameType, types.CodeType, types.TracebackType, types.CellType)
#: Builtins that run code given as data, hand out a namespace or a frame, or fetch any name.
_CODE_BUILTINS = ("exec", "eval", "compile", "__import__", "breakpoint", "globals", "locals", "vars", "help",
                  "input", "getattr", "setattr", "delattr", "hasattr", "open", "__build_class__")
#: Kinds whose values are decided one by one: functions, methods and builtins (by where each comes from).
_PER_OBJECT = frozenset({types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.ModuleType, dict,
                         types.MethodWrapperType, types.WrapperDescriptorType, types.MethodDescriptorType,
                         types.ClassMethodDescriptorType, types.GetSetDescriptorType, types.MemberDescriptorType,
                         staticmethod, classmethod, property})
#: torch modules whose private classes honest code names whole, to subclass or check against.
_PRIVATE_CLASS_HOMES = ("torch.nn", "torch.optim", "torch.utils.data")


class SubsetGuardRefused(Exception):
    """An operation outside the exercise's subset, refused at run time (the judge reads only the type's name)."""


#: One subclass per reason (``grader.wire.guarded.REFUSALS``), named so the judge can word it.
_REFUSALS = {kind: type(name, (SubsetGuardRefused,), {"__module__": __name__}) for kind, name in G.REFUSALS.items()}


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + ".")


def _matches(path: str, entry: str) -> bool:
    if "*" not in entry and "?" not in entry:
        return _under(path, entry)
    depth = entry.count(".") + 1
    parts = path.split(".")
    return len(parts) >= depth and fnmatch.fnmatchcase(".".join(parts[:depth]), entry)


def _private(parts) -> str | None:
    return next((p for p in parts if p.startswith("_") and not (p.startswith("__") and p.endswith("__"))), None)


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def refuse(kind: str):
    """Raise the refusal for ``kind`` (a key of ``grader.wire.guarded.REFUSALS``)."""
    raise _REFUSALS[kind](kind)


class RuntimeSubset:
    """One submission's subset, from the judge's lists: ``module``/``filename`` name the candidate's own code."""

    def __init__(self, lists: dict, *, module: str, filename: str):
        self.module, self.filename = module, filename
        self.dunders = frozenset(lists.get("dunders", ()))
        self.frames = frozenset(lists.get("frames", ()))
        self.refused_names = frozenset(lists.get("refused", ()))
        self.patterns = tuple(lists.get("patterns", ()))
        self.stdlib = tuple(lists.get("stdlib", ()))
        self.torch_lifted = tuple(lists.get("torch_lifted", ()))
        self.torch_denied = tuple(lists.get("torch_denied", ()))
        self.never = tuple(lists.get("never", ()))
        self.never_except = tuple(lists.get("never_except", ()))
        self.never_homes = frozenset(lists.get("never_homes", ()))
        self.forbidden_packages = tuple(lists.get("forbidden_packages", ()))
        self._names: dict[str, int] = {}
        self._members: dict[tuple[str, str], bool] = {}
        self._modules: dict[str, bool] = {}
        self._owned: dict[type, bool] = {}
        self._namespaces: tuple[int, frozenset[int]] = (-1, frozenset())
        self.plain = set(_PLAIN)
        torch = sys.modules.get("torch")
        if torch is not None:
            self.plain |= {torch.Tensor, torch.nn.Parameter, torch.Size, torch.dtype, torch.device}
        self.unsafe = {id(getattr(builtins, n)) for n in _CODE_BUILTINS if hasattr(builtins, n)}
        self.allowed = {id(o) for o in map(self._lookup, (*lists.get("allowed_members", ()), *self.never_except))
                        if o is not None}
        self.forbidden = {id(o) for o in map(self._lookup, lists.get("forbidden_apis", ())) if o is not None}
        self.unsafe |= {id(o) for o in map(self._lookup, lists.get("unsafe_members", ())) if o is not None}
        self.unsafe -= self.allowed
        #: Kinds of object whose every instance is decided alike (not functions, classes, modules or listed objects).
        self._special = {type(o) for o in (*map(self._lookup, lists.get("forbidden_apis", ())),
                                           *map(self._lookup, lists.get("unsafe_members", ())))}

    @staticmethod
    def _lookup(dotted: str):
        """The object a dotted name names among the modules already loaded (nothing is imported here)."""
        parts = dotted.split(".")
        for n in range(len(parts), 0, -1):
            obj = sys.modules.get(".".join(parts[:n]))
            if obj is None:
                continue
            for name in parts[n:]:
                try:  # a module's own namespace: its lazy __getattr__ would import (a forbidden package refuses)
                    obj = obj.__dict__.get(name) if type(obj) is types.ModuleType else getattr(obj, name, None)
                except Exception:
                    return None
            return obj
        return None

    # ------------------------------------------------------------------ names

    _PLAIN_NAME, _PRIVATE_NAME, _REFUSED_NAME = 0, 1, 2

    def name_kind(self, name: str) -> int:
        kind = self._names.get(name)
        if kind is None:
            if _dunder(name):
                kind = self._PLAIN_NAME if name in self.dunders else self._REFUSED_NAME
            elif name in self.frames or any(fnmatch.fnmatchcase(name, p) for p in self.patterns):
                kind = self._REFUSED_NAME
            else:
                kind = self._PRIVATE_NAME if name.startswith("_") else self._PLAIN_NAME
            self._names[name] = kind
        return kind

    def owned(self, obj) -> bool:
        """``obj`` is the candidate's: its own function, class, an instance of one, or a method of either."""
        kind = type(obj)
        if kind is types.FunctionType:
            return obj.__code__.co_filename == self.filename
        if kind is types.MethodType:
            return self.owned(obj.__func__) or self.owned(obj.__self__)
        if kind is super:
            return self._owned_class(obj.__thisclass__)
        return self._owned_class(obj if isinstance(obj, type) else kind)

    def _owned_class(self, cls: type) -> bool:
        known = self._owned.get(cls)
        if known is None:
            mro = type.__dict__["__mro__"].__get__(cls)
            known = self._owned[cls] = any(type.__dict__["__dict__"].__get__(c).get("__module__") == self.module
                                           for c in mro)
        return known

    # ------------------------------------------------------------------ module members and modules

    def member_allowed(self, module: str, name: str, value) -> bool:
        key = (module, name)
        known = self._members.get(key)
        if known is None:
            known = self._members[key] = self._path_allowed(f"{module}.{name}", value)
        return known

    def _path_allowed(self, path: str, value=None) -> bool:
        parts = path.split(".")
        if parts[0] == "torch":
            lifted = [e for e in self.torch_lifted if _matches(path, e)]
            private = _private(parts[1:])
            if private == parts[-1] and _private(parts[1:-1]) is None and isinstance(value, type) \
                    and any(_under(".".join(parts[:-1]), h) for h in _PRIVATE_CLASS_HOMES):
                private = None
            if private and not any(private in e.split(".") or fnmatch.fnmatchcase(private, e.rsplit(".", 1)[-1])
                                   for e in lifted):
                return False
            denied = [d for d in self.torch_denied if _under(path, d)]
            if denied:
                deepest = max(d.count(".") for d in denied)
                return any(e.count(".") >= deepest for e in lifted)
            return True
        if not any(_under(path, e) for e in self.never_except) and any(_matches(path, n) for n in self.never):
            return False
        allowed = [e for e in self.stdlib if _matches(path, e)]
        private = _private(parts[1:])
        if private and not any(private in e.split(".") for e in allowed):
            return False
        return bool(allowed) or any(_under(e, path) for e in self.stdlib)

    def module_allowed(self, module: types.ModuleType) -> bool:
        name = module.__dict__.get("__name__")
        if not isinstance(name, str) or sys.modules.get(name) is not module:
            return False  # not a module the import system made: nothing the subset knows
        known = self._modules.get(name)
        if known is None:
            known = self._modules[name] = name != "builtins" and self._path_allowed(name)
        return known

    # ------------------------------------------------------------------ values

    def value_refused(self, value) -> str | None:
        """Why ``value`` may not come back to the candidate (a key of ``REFUSALS``), or None (see the docstring)."""
        kind = type(value)
        if kind in self.plain:
            return None
        if kind is types.ModuleType:
            return None if self.module_allowed(value) else "module"
        if isinstance(value, _INTERNALS):
            return "value"
        if kind is dict:
            return "value" if id(value) in self.namespaces() else None
        key = id(value)
        if key in self.unsafe:
            return "value"
        if key in self.allowed or id(kind) in self.allowed:
            return None
        home = _home(value)
        if isinstance(home, str) and any(_under(home, p) for p in self.forbidden_packages):
            return "forbidden"
        if isinstance(home, str) and home.split(".")[0] in self.never_homes:
            return "value"
        if kind not in _PER_OBJECT and not isinstance(value, type) and kind not in self._special:
            self.plain.add(kind)  # an instance of an ordinary class: its kind decides for every instance
        return None

    def namespaces(self) -> frozenset[int]:
        """The ids of every loaded module's namespace and of the builtins mapping."""
        count, ids = self._namespaces
        if count != len(sys.modules):
            ids = frozenset(id(m.__dict__) for m in list(sys.modules.values()) if isinstance(m, types.ModuleType))
            self._namespaces = (len(sys.modules), ids)
        return ids


def _home(value) -> str | None:
    """The module a function, class, method or object comes from, as its type or itself says."""
    kind = type(value)
    if kind is types.BuiltinFunctionType:
        owner = value.__self__
        return owner.__dict__.get("__name__") if type(owner) is types.ModuleType else _home(owner)
    if kind is types.MethodType:
        return _home(value.__func__)
    if kind is types.FunctionType or isinstance(value, type):
        home = getattr(value, "__module__", None)
        return home if isinstance(home, str) else None
    home = getattr(kind, "__module__", None)
    return home if isinstance(home, str) else None
