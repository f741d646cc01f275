"""What the audit looks for in a resolved dotted path: forbidden APIs, tampering, private torch.

Forbidden is semantic: an exercise's ``apis`` (public names, or whole packages)
plus its ``kernels`` (fnmatch patterns over the last name of a reference into any
torch namespace: ``torch.*``, ``torch._C.*``, ``torch.ops.aten.*``). A path is a
hit when any prefix of it is the API itself, a re-export of the same object
(compared by identity in the judge's torch), carries the API's last name in any
torch namespace, or matches one of its kernel patterns.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from grader.exercise import ForbiddenConfig
from grader.judge.audit import torch_objects

#: Paths whose use is tampering wherever they appear: the grader's own modules, the
#: interpreter's hooks and object graph, raw memory, code loaded around the import system.
TAMPERING_PATHS = (
    "__main__", "grader", "probes", "sys.modules", "sys.setprofile", "sys.settrace", "sys._getframe",
    "sys._current_frames", "sys._current_exceptions", "sys.addaudithook", "sys.monitoring",
    "threading.setprofile", "threading.settrace", "threading.setprofile_all_threads",
    "threading.settrace_all_threads", "threading._profile_hook", "threading._trace_hook",
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "gc.callbacks", "gc.garbage",
    "ctypes", "_ctypes", "cffi", "inspect.currentframe", "inspect.stack", "inspect.trace",
    "inspect.getouterframes", "inspect.getinnerframes", "inspect.getframeinfo", "inspect.getgeneratorlocals",
    "inspect.getcoroutinelocals", "inspect.getclosurevars", "builtins.exec", "builtins.eval", "builtins.compile",
    "builtins.__dict__", "builtins.__import__", "builtins.breakpoint", "importlib.reload", "importlib.util",
    "importlib.machinery", "importlib._bootstrap", "runpy", "imp", "zipimport", "code.interact", "pdb",
    "torch.overrides._pop_mode", "torch.overrides._pop_mode_temporarily", "torch.overrides._push_mode",
    "torch.utils._python_dispatch._pop_mode", "torch.utils._python_dispatch._pop_mode_temporarily",
)

#: The last names of torch's mode-stack switches, in whichever torch module they are reached.
TAMPERING_TORCH_NAMES = (
    "DisableTorchFunction*", "_DisableTorchDispatch", "_disabled_torch_function_impl", "_pop_torch_function_stack",
    "_push_on_torch_function_stack", "_pop_torch_dispatch_stack", "_push_on_torch_dispatch_stack",
    "_set_dispatch_mode", "_unset_dispatch_mode", "_pop_mode*", "_push_mode", "_set_torch_function_mode",
)

#: Attributes that lead to a frame, a module's globals or every class alive: tampering on any object.
TAMPERING_ATTRIBUTES = frozenset({
    "f_back", "f_globals", "f_locals", "f_builtins", "f_trace", "tb_frame", "gi_frame", "cr_frame", "ag_frame",
    "__globals__", "__builtins__", "__subclasses__", "__code__", "__closure__",
})

#: Builtins that run or compile code given as data.
CODE_BUILTINS = ("exec", "eval", "compile", "breakpoint")

#: Modules where computed attribute access is tampering, not just ambiguous: they hold the interpreter's state.
STATE_MODULES = frozenset({"sys", "builtins", "gc", "inspect", "threading", "importlib", "ctypes", "__main__"})


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + ".")


def canonical(path: str) -> str:
    """The path as the module it really passes through: ``torch.sys.modules`` -> ``sys.modules``,
    ``os.sys.modules`` -> ``sys.modules`` (stdlib modules re-export each other as attributes)."""
    rebased = torch_objects.foreign_module(path)
    if rebased is not None:
        return rebased
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] in STATE_MODULES:
            return ".".join(parts[i:])
    return path


def tampering(path: str) -> str | None:
    """The tampering this path is (its canonical name), or None."""
    real = canonical(path)
    if any(_under(real, p) for p in TAMPERING_PATHS):
        return real
    if path.startswith("torch.") and any(fnmatch.fnmatchcase(part, pattern)
                                         for part in path.split(".")[1:] for pattern in TAMPERING_TORCH_NAMES):
        return path
    return None


def private_torch(path: str) -> bool:
    """A reference into ``torch._C``, ``torch.ops`` or any private torch name (``torch._foo``, ``m._Bar``)."""
    parts = path.split(".")
    if parts[0] != "torch" or len(parts) < 2:
        return False
    return parts[1] == "ops" or any(p.startswith("_") and not p.startswith("__") for p in parts[1:])


@dataclass
class ForbiddenRules:
    """An exercise's forbidden list, as a matcher over resolved paths."""

    apis: list[str]
    kernels: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, config: ForbiddenConfig) -> "ForbiddenRules":
        return cls(list(config.apis), {k: list(v) for k, v in config.kernels.items()})

    def match(self, path: str) -> str | None:
        """The public API ``path`` (or a prefix of it) stands for, or None."""
        if not self.apis:
            return None
        parts = path.split(".")
        for i in range(1, len(parts) + 1):
            if (api := self._match_one(".".join(parts[:i]))) is not None:
                return api
        return None

    def _match_one(self, path: str) -> str | None:
        for api in self.apis:  # exact, or anything inside a forbidden package
            if _under(path, api):
                return api
        if not path.startswith("torch."):
            return None
        for api in self.apis:
            if torch_objects.same(path, api):
                return api
        if torch_objects.is_module(path):  # names and patterns stand for functions and classes, not modules
            return None
        last = path.rsplit(".", 1)[-1]
        for api in self.apis:
            if last == api.rsplit(".", 1)[-1]:
                return api
        for api, patterns in self.kernels.items():
            if any(fnmatch.fnmatchcase(last, p) for p in patterns):
                return api
        return None
