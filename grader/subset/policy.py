"""The language subset's policy: which modules, module members and builtins a submission may name.

An allowlist, decided in the judge from the exercise's ``[subset]`` section on top of a
default (``DEFAULT_MODULES`` of the standard library, and torch's public API minus
``TORCH_DENIED``). What is not listed is not there: a path outside the policy is a
violation the walker (``grader.subset.walk``) reports with its line, before anything
runs. Paths are compared as the modules they really pass through (``tempfile.os.system``
is ``os.system``, ``torch.nn.init.torch.ops`` is ``torch.ops``), looked up in the judge's
own interpreter without importing anything a submission names.

Whatever no exercise may allow (``NEVER``: pickle, ctypes, sys, importlib, frames...) is
refused in ``exercise.toml`` too (:func:`refused_entry`), so no policy can hold it.
"""

from __future__ import annotations

import fnmatch
import functools
import importlib
import re
import sys
import types
from dataclasses import dataclass

from grader.subset import torch_objects
from grader.reports.model import ViolationCode

#: The standard library a candidate may reasonably use, by default: pure computation, no I/O, no
#: interpreter state. An entry is a module (all of its public names) or one member of it.
DEFAULT_MODULES = (
    "__future__", "abc", "bisect", "cmath", "collections", "contextlib", "copy", "dataclasses", "decimal", "enum",
    "fractions", "functools", "heapq", "inspect.Parameter", "inspect.signature", "itertools", "json", "math",
    "numbers", "operator", "random", "re", "statistics", "string", "textwrap", "types.MappingProxyType", "typing",
    "warnings",
    # more pure computation honest code reaches for: hashes, packing, encodings, dates, text and graph helpers,
    # in-memory files, and numpy (less its files, pickles and C parts: NEVER below). Left out, and why, in
    # docs/decisions/default-subset.md: clocks, threads, processes, files, the network, the interpreter.
    "array", "base64", "binascii", "calendar", "colorsys", "datetime", "difflib", "graphlib", "hashlib", "io.BytesIO",
    "io.StringIO", "keyword", "numpy", "pprint", "reprlib", "struct", "unicodedata", "zlib",
)
#: Decorators that only compile (TorchScript, torch.compile): accepted where they decorate, and taken out of the
#: module the sandbox runs (``grader.subset.rewrite``): the function runs as written, which is what they promise.
COMPILE_ONLY = ("torch.jit.script", "torch.jit.script_if_tracing", "torch.jit.ignore", "torch.jit.unused",
                "torch.jit.export", "torch.compile", "torch.compiler.disable")
#: torch's public API, less what loads code, pickles, compiles, spawns or reaches the dispatcher by name.
#: An exercise's ``[subset] modules`` entry lifts a denial at or above its own depth (``torch.distributed``
#: lifts ``torch.distributed``, not ``torch.distributed.rpc``).
TORCH_DENIED = (
    "torch.ops", "torch.library", "torch.classes", "torch.hub", "torch.package", "torch.serialization",
    "torch.jit", "torch.fx", "torch.compile", "torch.compiler", "torch.export", "torch.cond", "torch.onnx",
    "torch.multiprocessing", "torch.distributed", "torch.distributed.rpc", "torch.distributed.elastic",
    "torch.distributed.launcher", "torch.distributed.run", "torch.distributed.launch",
    "torch.distributed.checkpoint", "torch.profiler", "torch.autograd.profiler", "torch.overrides",
    "torch.utils.cpp_extension", "torch.utils.model_zoo", "torch.utils.benchmark", "torch.utils.collect_env",
    "torch.utils.bottleneck", "torch.utils.tensorboard", "torch.utils.show_pickle", "torch.utils.dlpack",
    "torch.utils.bundled_inputs", "torch.utils.mobile_optimizer", "torch.utils.jit", "torch.cuda.jiterator",
    "torch.cuda.memory.CUDAPluggableAllocator", "torch.cuda.memory.change_current_allocator",
    "torch.cuda.change_current_allocator", "torch.monitor",
    # fx under other names: graph-mode quantization traces into an fx graph and generates code from it
    "torch.ao.quantization.quantize_fx", "torch.ao.quantization.fx", "torch.ao.quantization.quantize_pt2e",
    "torch.ao.ns", "torch.quantization.quantize_fx", "torch.quantization.fx",
)

#: Modules and members no exercise may allow: they run code given as data, unpickle, touch raw memory,
#: the interpreter's own state, frames, or start other programs.
NEVER = (
    "pickle", "_pickle", "pickletools", "marshal", "shelve", "copyreg", "dill", "ctypes", "_ctypes", "cffi", "sys",
    "gc", "builtins", "importlib", "imp", "zipimport", "runpy", "code", "codeop", "pdb", "bdb", "traceback",
    "inspect", "types", "__main__", "grader", "probes", "shared", "subprocess", "pty", "signal", "resource",
    "os", "os.system", "os.exec*", "os.spawn*", "os.fork*", "os.popen", "os.posix_spawn*", "os.kill*",
    "os.environ", "os.putenv", "os.unsetenv", "os._exit", "os.dup*", "os.open", "os.write",
    "os.pwrite*", "os.read", "os.sys", "io.open", "io.FileIO", "io.open_code", "logging",
    "torch._C", "torch._dynamo", "torch.ops", "torch.library", "torch.classes", "torch.utils.cpp_extension",
    "torch.serialization", "torch.package", "torch.hub", "torch.jit", "torch.fx",
    # members of allowed modules that fetch attributes by a name given as data (``attrgetter("__globals__")``,
    # ``Formatter().get_field``), evaluate annotations (``get_type_hints``), build a reference the judge cannot
    # read (``ForwardRef``), or set attributes named by data on a function (``wraps`` copies ``__annotations__``
    # and ``__dict__`` from whatever it is given) or a class (``make_dataclass``'s namespace)
    "operator.attrgetter", "operator.methodcaller", "string.Formatter", "typing.ForwardRef", "typing.get_type_hints",
    "functools.update_wrapper", "functools.wraps", "dataclasses.make_dataclass",
    # numpy's files, pickles, C bindings, compilers and test runners
    "numpy.load", "numpy.save", "numpy.savez", "numpy.savez_compressed", "numpy.savetxt", "numpy.loadtxt",
    "numpy.genfromtxt", "numpy.fromfile", "numpy.fromregex", "numpy.memmap", "numpy.ctypeslib", "numpy.f2py",
    "numpy.distutils", "numpy.testing", "numpy.lib", "numpy.DataSource", "numpy.rec", "numpy.ma", "numpy.char",
    "numpy.show_config", "numpy.show_runtime", "numpy.core",
)
#: Members of ``inspect`` and ``types`` that read no frame and build no function: an exercise may list these.
NEVER_EXCEPT = ("inspect.signature", "inspect.Parameter", "inspect.Signature", "types.MappingProxyType")

#: Builtins no submission may name: they run code given as data, hand out a namespace or a frame,
#: or import by a name given as data (``help("os")`` imports).
NEVER_BUILTINS = frozenset({"exec", "eval", "compile", "__import__", "breakpoint", "globals", "locals", "vars",
                            "help", "open", "__build_class__"})
#: Builtins an exercise may add with ``[subset] builtins``.
OPTIONAL_BUILTINS = frozenset({"open"})
#: Builtins that fetch an attribute by a name given as data: only ever called directly (``grader.subset.walk``).
ATTRIBUTE_BUILTINS = frozenset({"getattr", "setattr", "hasattr", "delattr"})

#: Dunder attributes a submission may read or write on any object: naming and protocol methods, never a
#: namespace, a frame, a function's code or globals, a class's bases or subclasses.
DUNDER_ATTRIBUTES = frozenset({
    "__init__", "__call__", "__len__", "__name__", "__qualname__", "__doc__", "__class__", "__enter__", "__exit__",
    "__iter__", "__next__", "__getitem__", "__setitem__", "__delitem__", "__contains__", "__repr__", "__str__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__post_init__",
    "__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__", "__matmul__", "__neg__",
    "__abs__", "__float__", "__int__", "__index__", "__version__", "__module__",
})
#: Dunder names a submission may read bare (module-level facts the interpreter sets).
DUNDER_NAMES = frozenset({"__name__", "__file__", "__doc__", "__qualname__", "__module__", "__class__", "__debug__"})
#: Dunder methods no submission defines: copy and pickle set an object's attributes from the state they return,
#: names included (a way to attributes such as ``__annotations__`` that no ``setattr`` would be let to write).
NEVER_DEFINED = frozenset({"__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__getnewargs__",
                           "__getnewargs_ex__"})
#: Dunder names a submission may bind itself by assignment (in a module or a class body); defining a dunder
#: *method* (``def __call__``) is fine, but for ``NEVER_DEFINED``.
DUNDER_ASSIGNABLE = frozenset({"__all__", "__slots__", "__hash__", "__doc__", "__version__", "__author__"})


def _interpreter_attributes(*objects, prefixes: tuple[str, ...]) -> frozenset[str]:
    """The attributes these objects really have under ``prefixes``: frames, code, tracebacks, generators."""
    return frozenset(a for o in objects for a in dir(o) if a.startswith(prefixes))


def _samples():
    def gen():
        yield

    async def coro():
        pass

    async def agen():
        yield

    g, c, a = gen(), coro(), agen()
    try:
        raise ValueError
    except ValueError as e:
        tb = e.__traceback__
    try:
        return g, c, a, tb, sys._getframe(), gen.__code__
    finally:
        c.close()


#: Frame, code, traceback, generator and coroutine internals, as this interpreter names them.
FRAME_ATTRIBUTES = _interpreter_attributes(*_samples(), prefixes=("f_", "tb_", "gi_", "cr_", "ag_", "co_"))

#: torch's switches of its own dispatch and mode stacks, wherever they are reached (a Tensor's class
#: included): no submission has a reason to name them.
TORCH_SWITCHES = ("DisableTorchFunction*", "_DisableTorchDispatch", "_disabled_torch_function_impl",
                  "_pop_torch_function_stack", "_push_on_torch_function_stack", "_pop_torch_dispatch_stack",
                  "_push_on_torch_dispatch_stack", "_set_dispatch_mode", "_unset_dispatch_mode", "_pop_mode*",
                  "_push_mode", "_set_torch_function_mode", "_ExcludeDispatchKeyGuard", "_IncludeDispatchKeyGuard",
                  "_AutoDispatchBelow*", "_DisablePythonDispatcher", "_EnablePythonDispatcher")

_ENTRY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(\.[A-Za-z0-9_*?]+)?$")


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + ".")


def _matches(path: str, entry: str) -> bool:
    """``path`` is ``entry`` or inside it; the entry's last part may be an fnmatch pattern."""
    if "*" not in entry and "?" not in entry:
        return _under(path, entry)
    depth = entry.count(".") + 1
    parts = path.split(".")
    return len(parts) >= depth and fnmatch.fnmatchcase(".".join(parts[:depth]), entry)


def refused_entry(entry: str) -> str | None:
    """Why ``entry`` cannot be in an exercise's ``[subset] modules``; None when it can."""
    if not _ENTRY.match(entry):
        return "not a dotted name"
    if entry == "os" or Policy._never(entry):
        return "no exercise may allow it: it runs code given as data, unpickles, or reaches the interpreter"
    return None


def _private(parts: list[str]) -> str | None:
    return next((p for p in parts if p.startswith("_") and not (p.startswith("__") and p.endswith("__"))), None)


@dataclass(frozen=True)
class Verdict:
    """Why a path is outside the subset: the code, and the judge's words for it (without the line)."""

    code: ViolationCode
    text: str
    path: str | None = None  # the module or member named: its fix is looked up by it (``grader.subset.fixes``)


@dataclass(frozen=True)
class Policy:
    """One exercise's subset: the entries it allows on top of the defaults, and the builtins it adds."""

    modules: tuple[str, ...] = ()
    builtins: frozenset[str] = frozenset()

    @classmethod
    def of(cls, subset) -> "Policy":
        """From an exercise's ``SubsetConfig`` (or None: the defaults)."""
        if subset is None:
            return cls()
        return cls(tuple(subset.modules), frozenset(subset.builtins))

    # ------------------------------------------------------------------ entries

    @functools.cached_property
    def stdlib_entries(self) -> tuple[str, ...]:
        """The standard-library entries, each also as the module it really is (``os.path`` and ``posixpath``)."""
        spelled = tuple(DEFAULT_MODULES) + tuple(e for e in self.modules if not _under(e, "torch"))
        return tuple(dict.fromkeys([*spelled, *(self.canonical(e) for e in spelled if "*" not in e)]))

    @functools.cached_property
    def torch_entries(self) -> tuple[str, ...]:
        return tuple(e for e in self.modules if _under(e, "torch"))

    @functools.cached_property
    def roots(self) -> frozenset[str]:
        """Top-level modules some entry lives in: the only ones the judge looks up (imports) itself."""
        return frozenset(e.split(".")[0] for e in (*DEFAULT_MODULES, *self.modules)) | {"torch"}

    def importable(self) -> tuple[str, ...]:
        """Module names an ``import`` may name at run time (the sandbox's guard checks the same list)."""
        return tuple(sorted({*self.stdlib_entries, "torch", *self.torch_entries}))

    # ------------------------------------------------------------------ verdicts

    def import_verdict(self, module: str) -> Verdict | None:
        """``import module``: allowed when the module, or something inside it, is in the subset
        (``import os`` where ``os.replace`` is: only ``os.replace`` may then be used)."""
        if module == "torch":
            return None
        entries = self.torch_entries if _under(module, "torch") else self.stdlib_entries
        if any(_under(e, module) and e != module for e in entries):
            return None
        verdict = self.member_verdict(module)
        if verdict is not None and verdict.code is ViolationCode.MEMBER:  # a module, named by an import
            return Verdict(ViolationCode.IMPORT, verdict.text.replace("the name ", "the module "), verdict.path)
        return verdict

    def member_verdict(self, path: str) -> Verdict | None:
        """A reference ``path`` (``os.path.join``, ``torch.nn.functional.relu``) read from the source."""
        real = self.canonical(path)
        for candidate in dict.fromkeys((path, real)):
            verdict = self._verdict(candidate)
            if verdict is not None:
                return verdict if candidate == path else Verdict(
                    verdict.code, f"`{_short(path)}` is `{_short(real)}`, and {verdict.text}", verdict.path)
        return None

    def _verdict(self, path: str) -> Verdict | None:
        parts = path.split(".")
        if parts[0] == "torch":
            return self._torch_verdict(path, parts)
        if self._never(path):
            return Verdict(ViolationCode.IMPORT if len(parts) == 1 else ViolationCode.MEMBER,
                           f"`{_short(path)}` is never part of the subset", path)
        allowed = [e for e in self.stdlib_entries if _matches(path, e)]
        private = _private(parts[1:])
        if private and not any(_matches(path, e) and private in e.split(".") for e in allowed):
            return Verdict(ViolationCode.PRIVATE, f"`{_short(path)}` is a private name", path)
        if not allowed:
            if any(_under(e, path) for e in self.stdlib_entries):
                return None  # a package on the way to an allowed member (`os` for `os.path`)
            what = "module" if len(parts) == 1 else "name"
            return Verdict(ViolationCode.IMPORT if len(parts) == 1 else ViolationCode.MEMBER,
                           f"the {what} `{_short(path)}` is not part of this exercise's subset", path)
        return None

    def _torch_verdict(self, path: str, parts: list[str]) -> Verdict | None:
        lifted = [e for e in self.torch_entries if _matches(path, e)]
        private = _private(parts[1:])
        if private and self._private_base_class(parts):
            private = None
        if private and not any(private in e.split(".") or fnmatch.fnmatchcase(private, e.rsplit(".", 1)[-1])
                               for e in lifted):
            return Verdict(ViolationCode.PRIVATE, f"`{_short(path)}` is private torch (`{_short(private)}`)", path)
        denied = [d for d in TORCH_DENIED if _under(path, d)]
        if denied:
            deepest = max(denied, key=lambda d: d.count("."))
            if not any(e.count(".") >= deepest.count(".") for e in lifted):
                return Verdict(ViolationCode.MEMBER, f"`{_short(path)}` is not part of this exercise's subset "
                                                     f"(`{deepest}` is left out)", path)
        return None

    def _private_base_class(self, parts: list[str]) -> bool:
        """``torch.nn.modules.batchnorm._BatchNorm``, ``torch.optim.lr_scheduler._LRScheduler``: a private *class*
        of a public ``torch.nn``/``torch.optim``/``torch.utils.data`` module, named as a whole (to subclass it or
        in ``isinstance``), is the base class every honest codebase names that way; its own private members are not."""
        privates = [i for i, p in enumerate(parts) if i and _private([p])]
        if len(privates) != 1 or privates[0] != len(parts) - 1:
            return False
        module = ".".join(parts[:-1])
        if not any(_under(module, m) for m in ("torch.nn", "torch.optim", "torch.utils.data")):
            return False
        obj = _root("torch")
        for part in parts[1:]:
            obj = _static_attr(obj, part) if obj is not None else torch_objects.MISSING
            if obj is torch_objects.MISSING:
                return False
        return isinstance(obj, type)

    @staticmethod
    def _never(path: str) -> bool:
        """In ``NEVER`` (bare ``os`` aside: its members are listed one by one)."""
        if any(_under(path, e) for e in NEVER_EXCEPT):
            return False
        return any(_matches(path, n) for n in NEVER if n != "os")

    # ------------------------------------------------------------------ objects

    def canonical(self, path: str) -> str:
        """``path`` rebased on the last module object it passes through, as the judge's interpreter has it:
        ``tempfile.os.system`` -> ``os.system``, ``os.path.join`` -> ``posixpath.join``."""
        parts = path.split(".")
        if parts[0] not in self.roots:
            return path
        obj = _root(parts[0])
        if obj is None:
            return path
        rebased = path
        for i, part in enumerate(parts[1:], 1):
            obj = self._child(obj, parts[:i + 1])
            if obj is torch_objects.MISSING:
                break
            if isinstance(obj, types.ModuleType) and isinstance(getattr(obj, "__name__", None), str):
                rebased = ".".join([obj.__name__, *parts[i + 1:]])
        return rebased

    def _child(self, obj, parts: list[str]):
        """``obj.<last part>`` without a module's lazy import; a torch submodule the judge has not imported
        yet (``torch.onnx``, ``torch.distributed.elastic``: the sandbox's torch would import it on first use)
        is imported here when the subset allows it, so what it re-exports is seen for what it is."""
        found = _static_attr(obj, parts[-1])
        if found is torch_objects.MISSING and isinstance(obj, types.ModuleType) and parts[0] == "torch" \
                and self._torch_verdict(".".join(parts), parts) is None:
            try:
                found = importlib.import_module(".".join(parts))
            except Exception:  # not a module (a missing name), or one that fails to import here
                return torch_objects.MISSING
        return found

    def is_module(self, path: str) -> bool | None:
        """Whether ``path`` is a module in the judge's interpreter; None when it cannot be told."""
        parts = path.split(".")
        if parts[0] not in self.roots:
            return None
        obj = _root(parts[0])
        for i, part in enumerate(parts[1:], 1):
            if obj is None or obj is torch_objects.MISSING:
                return None
            obj = self._child(obj, parts[:i + 1])
        if obj is None or obj is torch_objects.MISSING:
            return None
        return isinstance(obj, types.ModuleType)


def _short(text: str, limit: int = 80) -> str:
    """A name from the candidate's source as the judge quotes it: one line, capped."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


@functools.lru_cache(maxsize=64)
def _root(name: str):
    """The top-level module ``name`` (a root of the judge's own policy, never a name a submission chose alone)."""
    if name == "torch":
        return torch_objects._torch()
    if name in sys.modules:
        return sys.modules[name]
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def _static_attr(obj, name: str):
    """``getattr(obj, name)`` without running a module's lazy ``__getattr__`` (which would import)."""
    if name.startswith("__") and name.endswith("__"):
        return torch_objects.MISSING
    if isinstance(obj, types.ModuleType):
        return torch_objects.module_attribute(obj, name)
    try:
        return getattr(obj, name)
    except Exception:
        return torch_objects.MISSING
