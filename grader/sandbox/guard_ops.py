"""The guarded operations a rewritten submission calls, and the guarded ``getattr`` family. INSIDE the sandbox.

Each function here is what one rewritten form calls (``grader.wire.guarded``) or one builtin
the candidate's module gets in place of Python's own; the decisions are the runtime subset's
(``grader.sandbox.runtime_subset``). A name written in the source (``obj.clamp``) is the judge's
audit's to count when it names a forbidden API; a name computed at run time (``getattr(obj, name)``)
is refused here. Standard library only: it is staged into the sandbox.
"""

from __future__ import annotations

import builtins
import types
import weakref

from grader.sandbox.runtime_subset import RuntimeSubset, refuse
from grader.wire import guarded as G

_real_getattr, _real_setattr, _real_delattr, _real_hasattr = builtins.getattr, builtins.setattr, builtins.delattr, \
    builtins.hasattr


def operations(subset: RuntimeSubset) -> dict:
    """The guards by the names the rewrite calls them, and the guarded ``getattr``, ``setattr``, ``hasattr``, ``delattr``."""
    name_kind, owned, plain = subset.name_kind, subset.owned, subset.plain
    PRIVATE, REFUSED = subset._PRIVATE_NAME, subset._REFUSED_NAME

    #: Private names the candidate's code added to objects it did not make (``ctx._blocks = ...``): its own.
    added: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def check_name(obj, name, *, computed: bool) -> None:
        kind = name_kind(name)
        if kind == REFUSED or (computed and name in subset.refused_names):
            refuse("name")
        if kind == PRIVATE and type(obj) is not types.ModuleType and not owned(obj) and not _added(obj, name):
            refuse("private")  # (a module's private names are its members' rule)

    def _added(obj, name) -> bool:
        try:
            return name in added.get(obj, ())
        except TypeError:  # not weakly referable: nothing of the candidate's was recorded on it
            return False

    def add_private(obj, name) -> None:
        """A private name the candidate adds to an instance it did not make: allowed when the instance has no
        attribute of that name yet (torch's own are never replaced), then it is the candidate's."""
        if _added(obj, name):
            return
        if isinstance(obj, type) or type(obj) in (types.FunctionType, types.BuiltinFunctionType, types.ModuleType) \
                or _real_hasattr(obj, name):
            refuse("private")
        try:
            added.setdefault(obj, set()).add(name)
        except TypeError:
            refuse("private")

    def member(obj, name) -> None:
        """A module's member is the policy's to allow, decided before it is read (no lazy import runs)."""
        if type(obj) is types.ModuleType and not subset.member_allowed(obj.__dict__.get("__name__", ""), name,
                                                                       obj.__dict__.get(name)):
            refuse("module")

    def fetched(obj, name, value, *, computed: bool):
        if type(value) in plain:
            return value
        why = subset.value_refused(value)
        if why is not None:
            refuse(why)
        if id(value) in subset.forbidden and (computed or name not in subset.refused_names):
            refuse("forbidden")
        return value

    def attr(obj, name):
        check_name(obj, name, computed=False)
        member(obj, name)
        return fetched(obj, name, _real_getattr(obj, name), computed=False)

    def writable(obj, name, *, computed: bool, adding: bool = False):
        if adding and name_kind(name) == PRIVATE and type(obj) is not types.ModuleType and not owned(obj):
            add_private(obj, name)
        check_name(obj, name, computed=computed)
        kind = type(obj)
        if kind is types.ModuleType:
            current = obj.__dict__.get(name)
            if callable(current) or type(current) is types.ModuleType or not subset.member_allowed(
                    obj.__dict__.get("__name__", ""), name, current):
                refuse("write")
        elif (isinstance(obj, type) or kind in (types.FunctionType, types.BuiltinFunctionType)
              or name_kind(name) != PRIVATE and name.startswith("__")) and not owned(obj):
            refuse("write")
        return obj

    def write(obj, name):
        return writable(obj, name, computed=False, adding=True)

    def delete(obj, name):
        if type(obj) is types.ModuleType:
            refuse("write")
        return writable(obj, name, computed=False)

    def update(obj, name):
        attr(obj, name)
        return writable(obj, name, computed=False)

    def value(v):
        if type(v) in plain:
            return v
        why = subset.value_refused(v)
        if why is not None:
            refuse(why)
        return v

    def container(c):
        if type(c) is dict and id(c) in subset.namespaces():
            refuse("write")
        return c

    def deep(item, depth: int):
        value(item)
        if depth > 0 and type(item) in (tuple, list):
            for part in item:
                deep(part, depth - 1)
        return item

    def iterate(iterable, depth: int = 0):
        if type(iterable) is range:
            return iterable
        return _checked(iter(iterable), deep, depth)

    def enter(manager, depth: int = 0):
        return _Entered(manager, deep, depth, "__enter__", "__exit__")

    def aenter(manager, depth: int = 0):
        return _AsyncEntered(manager, deep, depth, "__aenter__", "__aexit__")

    def getattr(obj, name, *default):
        if type(name) is str:
            check_name(obj, name, computed=True)
            member(obj, name)
        try:
            found = _real_getattr(obj, name)
        except AttributeError:
            if default:
                return default[0]
            raise
        if type(found) is types.ModuleType:  # as in the source: a module is only ever `module.name`
            refuse("module")
        return fetched(obj, name, found, computed=True)

    def hasattr(obj, name):
        if type(name) is str:
            check_name(obj, name, computed=True)
            member(obj, name)
        return _real_hasattr(obj, name)

    def setattr(obj, name, value):
        if type(name) is str:
            writable(obj, name, computed=True, adding=True)
        return _real_setattr(obj, name, value)

    def delattr(obj, name):
        if type(obj) is types.ModuleType:
            refuse("write")
        if type(name) is str:
            writable(obj, name, computed=True)
        return _real_delattr(obj, name)

    return {G.ATTR: attr, G.WRITE: write, G.DELETE: delete, G.UPDATE: update, G.VALUE: value,
            G.CONTAINER: container, G.ITER: iterate, G.ENTER: enter, G.AENTER: aenter,
            "getattr": getattr, "hasattr": hasattr, "setattr": setattr, "delattr": delattr}


def _checked(iterator, deep, depth: int):
    for item in iterator:
        yield deep(item, depth)


class _Entered:
    """A context manager whose ``__enter__`` result is checked; everything else is the manager's own."""

    __slots__ = ("_manager", "_deep", "_depth", "_exit")

    def __init__(self, manager, deep, depth: int, enter: str, exit: str):
        kind = type(manager)
        if not (_real_hasattr(kind, enter) and _real_hasattr(kind, exit)):
            raise TypeError(f"'{kind.__name__}' object does not support the "
                            f"{'asynchronous ' if enter == '__aenter__' else ''}context manager protocol")
        self._manager, self._deep, self._depth, self._exit = manager, deep, depth, _real_getattr(kind, exit)

    def __enter__(self):
        return self._deep(type(self._manager).__enter__(self._manager), self._depth)

    def __exit__(self, *exc):
        return self._exit(self._manager, *exc)


class _AsyncEntered(_Entered):
    __slots__ = ()

    async def __aenter__(self):
        return self._deep(await type(self._manager).__aenter__(self._manager), self._depth)

    async def __aexit__(self, *exc):
        return await self._exit(self._manager, *exc)
