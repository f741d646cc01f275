"""Forbidden APIs made absent in the sandbox, before the candidate's module is imported.

The second net behind the judge's source check. It does not watch calls (a watch
is per thread and lives in the candidate's own interpreter, where a new thread, a
``__wrapped__`` or ``torch._C.DisableTorchFunction()`` gets past it); it takes
what the exercise forbids out of the process, so there is nothing left to reach:

- **operators**: every dispatcher operator whose name matches one of the
  exercise's ``[forbidden.kernels]`` patterns (matched against the operators this
  torch really has) gets a kernel that raises, at every dispatch key that had one
  (the backends, Meta, the Autograd and Composite aliases, vmap, autocast...). The
  dispatcher is one table for the whole process, so no thread, no mode switch
  (``no_grad``, ``inference_mode``, below-autograd guards, ``DisableTorchFunction``)
  and no alias (``torch.X``, ``torch._C._nn.X``, ``x.X()``, ``torch.ops.aten.X``)
  reaches the original. The Python decompositions torch keeps for those operators
  (the tracing machinery's tables, ``py_kernels``) are replaced too;
- **Python-level APIs** (``[forbidden] apis``): a Python function is emptied in
  place (its code replaced by one that raises, along its ``__wrapped__`` chain and
  the closures holding it), so every reference anywhere, a subclass, a table or a
  decorator's closure, holds the empty one; a class has every method of its own
  emptied; a C function is replaced by a raising stand-in in every torch namespace
  that binds it (what it computes is the operators' part); a torch package has
  every function and class defined in it emptied, and no module of it can be
  loaded any more;
- **imports**: the candidate's own ``import`` of a forbidden package fails. This is
  all absence can mean for a standard-library package (``time``, ``threading``),
  which torch and the worker use themselves; the judge refuses the import anyway.

A removed API raises :class:`ForbiddenAPIError` and is recorded as its index in the
list the judge sent: the worker reports indices, and the judge names them from the
exercise's own list, in its own words. Recording can only take credit away.

Processes: ``fork`` children inherit all of this. A process ``multiprocessing``
starts fresh (spawn, forkserver: the DDP ranks of ``probekit.run_ranks``) imports
the worker's main module as ``__mp_main__`` first, which installs the same plan
from :data:`PLAN_ENV` (see ``grader.sandbox.worker``). A process started any other
way (``subprocess``) is the judge's subset to refuse.

The dispatcher half lives in ``grader.sandbox.absent_ops``, the imports' in
``grader.sandbox.absent_imports``. Standard library, torch and those modules only: it runs
from the staged copy in the sandbox.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import sys
import threading
import types
import warnings
from dataclasses import dataclass, field
from typing import Callable

from grader.sandbox import absent_imports, absent_ops

#: The plan, as JSON, for processes the worker's ``multiprocessing`` starts (spawn, forkserver).
PLAN_ENV = "GRADER_FORBIDDEN_PLAN"

#: The keyword a removed function's ``__kwdefaults__`` carries its raiser under (its code has no globals of ours).
_RAISER_KEYWORD = "_grader_removed"


class ForbiddenAPIError(RuntimeError):
    """A forbidden API was called (or imported): the grader removed it from this sandbox."""

    def __init__(self, message: str = "", index: int | None = None):
        super().__init__(message)
        self.index = index  # its place in the judge's forbidden list


class ForbiddenImportError(ForbiddenAPIError, ImportError):
    """The candidate's own import of a forbidden package."""


class ForbiddenSourceError(PermissionError):
    """A removed API's own source file opened again (to load it as another module): refused, not recorded, since
    reading a file is no call (Python's own line cache reads it for a warning or a traceback, and copes)."""


@dataclass
class Removal:
    """What :func:`install` did in this process."""

    plan: dict
    missing: list[int] = field(default_factory=list)  # APIs this torch (or Python) does not have
    packages: list[int] = field(default_factory=list)  # APIs that are whole packages (their import refused)
    operators: int = 0  # dispatcher operators that now raise
    record: Callable[[int], None] = lambda index: None
    take: Callable[[], list[int]] = list  # the indices recorded since the last take, sorted


_INSTALLED: Removal | None = None


def install(apis: list[str], kernels: dict[str, list[str]] | None = None, *,
            candidate_dirs: list[str] = ()) -> Removal:
    """Remove ``apis`` (dotted names) and the operators ``kernels`` (API -> fnmatch patterns) stands for.

    ``candidate_dirs``: where the candidate's files are; an ``import`` written in them
    of a forbidden package fails. Once per process; a second call returns the first's result.
    """
    global _INSTALLED
    if _INSTALLED is not None:
        return _INSTALLED
    import torch

    plan = {"apis": list(apis), "kernels": {k: list(v) for k, v in (kernels or {}).items()},
            "candidate_dirs": [os.path.realpath(d) for d in candidate_dirs]}
    record, take = _recorder()
    removal = Removal(plan=plan, record=record, take=take)
    raisers = [_raiser(i, api, record) for i, api in enumerate(apis)]
    patterns = [list((kernels or {}).get(api, [])) for api in apis]
    with warnings.catch_warnings():  # "Overriding a previously registered kernel": meant, and not the candidate's output
        warnings.simplefilter("ignore")
        removed_ops = absent_ops.remove_operators(torch, patterns, raisers)
        stale = absent_ops.replace_decompositions(removed_ops, raisers)
        refused: dict[str, int] = {}
        sources: dict[str, str] = {}  # a removed torch API's source file or package folder -> the API
        for i, api in enumerate(apis):
            found = _resolve(api)
            if found is _MISSING:
                removal.missing.append(i)
            elif isinstance(found, types.ModuleType):
                removal.packages.append(i)
                refused.setdefault(found.__name__, i)
                if _is_torch(found.__name__):
                    sources.update(dict.fromkeys(_package_sources(found.__name__), api))
                    _empty_package(found.__name__, raisers[i])
            else:
                if _is_torch(api) and (where := _source_file(found)) is not None:
                    sources.setdefault(where, api)
                _remove_object(found, raisers[i], stale)
        _rebind(stale)
        if sources:
            absent_imports.refuse_sources(sources, ForbiddenSourceError)
        if refused:
            errors = {package: _raiser(i, apis[i], record, ForbiddenImportError) for package, i in refused.items()}
            absent_imports.refuse(errors, plan["candidate_dirs"], torch_packages={p for p in errors if _is_torch(p)})
    removal.operators = len(removed_ops)
    os.environ[PLAN_ENV] = json.dumps(plan)
    _INSTALLED = removal
    return removal


def install_inherited() -> Removal | None:
    """In a process ``multiprocessing`` started from the worker: install the plan the worker published."""
    text = os.environ.get(PLAN_ENV)
    if not text:
        return None
    plan = json.loads(text)
    return install(plan["apis"], plan["kernels"], candidate_dirs=plan["candidate_dirs"])


def take_hits() -> list[int]:
    """What this process recorded since the last take (a DDP rank sends it back with its result)."""
    return _INSTALLED.take() if _INSTALLED is not None else []


def record_hits(indices) -> None:
    """Record in this process what a child process recorded (``probekit.run_ranks``)."""
    if _INSTALLED is not None:
        for i in indices:
            if type(i) is int and 0 <= i < len(_INSTALLED.plan["apis"]):
                _INSTALLED.record(i)


# ------------------------------------------------------------------ recording and raising


def _recorder():
    seen: set[int] = set()
    lock = threading.Lock()

    def record(index: int) -> None:
        with lock:
            seen.add(index)

    def take() -> list[int]:
        with lock:
            out = sorted(seen)
            seen.clear()
        return out

    return record, take


def _raiser(index: int, api: str, record, error=ForbiddenAPIError):
    message = f"{api} is forbidden in this exercise: the grader removed it from the sandbox"

    def forbidden(*args, **kwargs):
        record(index)
        raise error(message, index)

    return forbidden


# ------------------------------------------------------------------ Python-level APIs

_MISSING = object()


def _resolve(dotted: str):
    """The object a dotted name names: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:n]))
        except ImportError:
            continue
        for name in parts[n:]:
            obj = getattr(obj, name, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


def _source_file(obj) -> str | None:
    """The file a Python function or class was defined in (before it is emptied); None for a C object."""
    if isinstance(obj, types.FunctionType):
        return os.path.realpath(obj.__code__.co_filename)
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    where = getattr(module, "__file__", None) if isinstance(obj, type) and obj.__flags__ & _HEAPTYPE else None
    return os.path.realpath(where) if isinstance(where, str) else None


def _package_sources(name: str) -> list[str]:
    """The files of a torch package's loaded modules, and its folder when it is a package (every file in it)."""
    found = []
    for module in list(sys.modules.values()):
        module_name = getattr(module, "__name__", None)
        if isinstance(module_name, str) and (module_name == name or module_name.startswith(name + ".")):
            where = getattr(module, "__file__", None)
            if isinstance(where, str):
                found.append(os.path.realpath(where))
                if getattr(module, "__path__", None) is not None:  # a package: its whole folder
                    found.append(os.path.dirname(os.path.realpath(where)) + os.sep)
    return found


def _is_torch(name: str) -> bool:
    return name == "torch" or name.startswith("torch.")


def _remove_object(obj, raiser, stale: dict) -> None:
    if isinstance(obj, types.FunctionType):
        _empty_function(obj, raiser)
    elif isinstance(obj, type) and obj.__flags__ & _HEAPTYPE:
        _empty_class(obj, raiser)
    else:  # a C function or type: replaced where torch names it; what it computes is the operators' part
        stale.setdefault(id(obj), (obj, raiser))


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python, whose attributes can be set


def _empty_function(fn: types.FunctionType, raiser) -> None:
    """Replace ``fn``'s code, in place, by one that raises; the same along what it wraps.

    Every reference to ``fn`` anywhere (a re-export, a subclass, a decorator's closure,
    a table) now holds the empty function. ``__wrapped__`` is followed and dropped, and
    a closure cell holding a function of the same name (a decorator's ``func``) is
    emptied too, so nothing of the original code stays reachable from it.
    """
    pending = [fn]
    while pending:
        f = pending.pop()
        if not isinstance(f, types.FunctionType) or f.__kwdefaults__ and _RAISER_KEYWORD in f.__kwdefaults__:
            continue
        inner = f.__dict__.pop("__wrapped__", None)
        pending += [inner] if inner is not None else []
        for cell in f.__closure__ or ():
            try:
                held = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if isinstance(held, types.FunctionType) and held.__name__ == f.__name__:
                pending.append(held)
        f.__code__ = _stand_in_code(f.__code__)
        f.__defaults__ = None
        f.__kwdefaults__ = {_RAISER_KEYWORD: raiser}


_STAND_INS: dict[int, types.CodeType] = {}


def _stand_in_code(original: types.CodeType) -> types.CodeType:
    """Code that calls the raiser the function's ``__kwdefaults__`` hold, with as many free
    variables as ``original`` (a function's closure must match its code's), under its name."""
    n = len(original.co_freevars)
    code = _STAND_INS.get(n)
    if code is None:
        free = [f"_free{i}" for i in range(n)]
        source = "def outer():\n"
        source += f"    {' = '.join(free)} = None\n" if free else ""
        source += f"    def removed(*args, {_RAISER_KEYWORD}, **kwargs):\n        {_RAISER_KEYWORD}()\n"
        source += f"        return ({', '.join(free)},)\n" if free else ""
        source += "    return removed\n"
        scope: dict = {}
        exec(compile(source, "<removed by the grader>", "exec"), scope)
        code = _STAND_INS[n] = scope["outer"]().__code__
    names = {"co_name": original.co_name}
    if hasattr(original, "co_qualname"):
        names["co_qualname"] = original.co_qualname
    return code.replace(**names)


def _empty_class(cls: type, raiser) -> None:
    """Empty every function ``cls`` defines itself (methods, static and class methods,
    properties), and give it a raising ``__init__`` if it inherits one: it can be neither
    built nor used, and a subclass that calls up into it raises too.

    A function in its namespace that another class defined (``Enum.__new__``, which every
    enum holds; an alias of a base class's method) is shared: it is replaced on ``cls``
    only, never emptied, or every other class holding it would lose it too.
    """
    if id(cls) in _EMPTIED_CLASSES:  # named twice (a class and its re-export): the first name's index stays
        return
    _EMPTIED_CLASSES.add(id(cls))
    own = cls.__qualname__ + "."
    for name, value in list(vars(cls).items()):
        functions = _functions_of(value)
        if functions and all(f.__qualname__.startswith(own) for f in functions):
            for fn in functions:
                _empty_function(fn, raiser)
        elif functions:
            setattr(cls, name, _stand_in(value, raiser))
    if "__init__" not in vars(cls):
        cls.__init__ = _stand_in(None, raiser)


_EMPTIED_CLASSES: set[int] = set()


def _stand_in(value, raiser):
    """A raising replacement for a class attribute of ``value``'s kind (a plain function for None)."""
    def removed(*args, **kwargs):
        raiser()

    kind = type(value)
    if kind is staticmethod or kind is classmethod:
        return kind(removed)
    if kind is property or kind is functools.cached_property:
        return property(removed, removed, removed)
    return removed


def _functions_of(value) -> list:
    kind = type(value)
    if kind is types.FunctionType:
        return [value]
    if kind is staticmethod or kind is classmethod:
        return [value.__func__]
    if kind is property:
        return [f for f in (value.fget, value.fset, value.fdel) if f is not None]
    if kind is functools.cached_property:
        return [value.func]
    return []


def _empty_package(name: str, raiser) -> None:
    """Empty every function and class defined in the loaded modules of torch package ``name``,
    and replace the C functions its modules bind (``torch.fft.fft`` is ``torch._C._fft.fft_fft``)."""
    prefix = name + "."
    for module in list(sys.modules.values()):
        module_name = getattr(module, "__name__", None)
        if not isinstance(module_name, str) or not (module_name == name or module_name.startswith(prefix)):
            continue
        namespace = vars(module)
        for attr, value in list(namespace.items()):
            if isinstance(value, types.BuiltinFunctionType):
                namespace[attr] = raiser
                continue
            defined_in = getattr(value, "__module__", None) if isinstance(value, (type, types.FunctionType)) else None
            if isinstance(defined_in, str) and (defined_in == name or defined_in.startswith(prefix)):
                _remove_object(value, raiser, {})


def _rebind(stale: dict[int, tuple[object, Callable]]) -> None:
    """Replace each stale object by its raiser in every loaded torch module that binds it."""
    if not stale:
        return
    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", None)
        namespace = getattr(module, "__dict__", None)
        if not isinstance(name, str) or not _is_torch(name) or not isinstance(namespace, dict):
            continue
        for attr, value in [(a, v) for a, v in namespace.items() if id(v) in stale]:
            original, raiser = stale[id(value)]
            if original is value:
                namespace[attr] = raiser
