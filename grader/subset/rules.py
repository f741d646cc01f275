"""An exercise's forbidden APIs, as the spellings the subset still allows: paths and attribute names.

Forbidden is semantic: ``apis`` (public names or packages) plus ``kernels`` (fnmatch patterns over
the last name of a reference into any torch namespace). A resolved path is a hit when a prefix of it
is the API, a re-export of the same object, carries its last name in a torch namespace, or matches a
kernel pattern. A value the judge cannot follow (``self.layer``) is reached by attribute name:
:meth:`ForbiddenRules.attribute_names` is the names the APIs stand for among those that exist in
torch (``clamp``, ``clip``, ``hardtanh``... for a clamp), less what the exercise's stub defines.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
from dataclasses import dataclass, field

from grader.subset.config import ForbiddenConfig
from grader.subset import torch_objects

#: torch namespaces whose names a value's attribute may stand for (functions, methods, classes).
NAMESPACES = (
    "torch", "torch.Tensor", "torch.nn", "torch.nn.Module", "torch.nn.functional", "torch.nn.init", "torch.nn.utils",
    "torch.nn.utils.rnn", "torch.nn.parallel", "torch.linalg", "torch.special", "torch.fft", "torch.autograd",
    "torch.utils.data", "torch.utils.checkpoint", "torch.optim", "torch.optim.lr_scheduler", "torch.distributed",
    "torch.ao.quantization", "torch.ao.nn.quantized", "torch._C", "torch._C._nn", "torch._C._VariableFunctions",
    "torch._C.TensorBase",
)


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + ".")


@functools.lru_cache(maxsize=1)
def torch_names() -> frozenset[str]:
    """Every name in ``NAMESPACES`` and every dispatcher op's name, in the judge's torch (empty without torch)."""
    torch = torch_objects._torch()
    if torch is None:
        return frozenset()
    from grader.subset.policy import _static_attr  # no lazy import of a torch submodule

    names: set[str] = set()
    for dotted in NAMESPACES:
        obj = torch
        for part in dotted.split(".")[1:]:
            obj = _static_attr(obj, part)
            if obj is torch_objects.MISSING:
                break
        if obj is not torch_objects.MISSING:
            names.update(n for n in dir(obj) if not (n.startswith("__") and n.endswith("__")))
    try:
        names.update(op.split("::", 1)[-1].split(".")[0] for op in torch._C._dispatch_get_all_op_names())
    except Exception:
        pass
    return frozenset(names)


def stub_names(source: str) -> frozenset[str]:
    """The attribute names the exercise's stub defines: its classes' methods and class attributes (a contract's
    ``forward``, ``backward``, ``apply``), which a submission reaches as ``self.name`` whatever a kernel pattern
    says. Not its module-level functions: inside the subset those are only ever called by their bare name,
    so autograd_function's own ``clamp`` leaves ``x.clamp(...)`` the forbidden Tensor method."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    names: set[str] = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for node in cls.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return frozenset(names)


@dataclass
class ForbiddenRules:
    """An exercise's forbidden list, as a matcher over resolved paths and over attribute names."""

    apis: list[str]
    kernels: dict[str, list[str]] = field(default_factory=dict)
    #: Names the exercise's stub defines, never an attribute-name hit.
    own_names: frozenset[str] = frozenset()

    @classmethod
    def of(cls, config: ForbiddenConfig, own_names: frozenset[str] = frozenset()) -> "ForbiddenRules":
        return cls(list(config.apis), {k: list(v) for k, v in config.kernels.items()}, own_names)

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

    def is_package(self, api: str) -> bool:
        """The API is a whole module (``torch.utils.checkpoint``, ``time``): calls into it cannot be told apart."""
        return bool(torch_objects.is_module(api)) or not api.startswith("torch")

    def attribute_names(self) -> dict[str, str]:
        """Attribute name -> the API it stands for, on any value (see the module docstring)."""
        return dict(_attribute_names(tuple(self.apis), tuple((k, tuple(v)) for k, v in self.kernels.items()),
                                     self.own_names))


@functools.lru_cache(maxsize=64)
def _attribute_names(apis: tuple[str, ...], kernels: tuple[tuple[str, tuple[str, ...]], ...],
                     own: frozenset[str]) -> tuple[tuple[str, str], ...]:
    existing = torch_names()
    found: dict[str, str] = {}
    for api in apis:
        last = api.rsplit(".", 1)[-1]
        if api.startswith("torch.") and not torch_objects.is_module(api) and (last in existing or not existing):
            found.setdefault(last, api)
    for api, patterns in kernels:
        for name in sorted(existing):
            if any(fnmatch.fnmatchcase(name, p) for p in patterns):
                found.setdefault(name, api)
    return tuple(sorted((n, a) for n, a in found.items() if n not in own))
