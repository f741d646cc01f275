"""Look dotted torch paths up in the judge's own torch, to compare objects by identity.

``torch.nn.modules.activation.MultiheadAttention`` *is* ``torch.nn.MultiheadAttention``;
``torch._C._nn.scaled_dot_product_attention`` *is*
``torch.nn.functional.scaled_dot_product_attention``; ``torch.sys`` is ``sys``.
The judge imports torch (trusted code) the first time an audit needs it and only
walks attributes of what is already there (a module's own namespace, never its lazy
``__getattr__``): it never imports a module a submission names. Without torch every lookup misses and the audit falls back to
matching names, which only ever finds more.
"""

from __future__ import annotations

import functools
import sys
import types

MISSING = object()


@functools.cache
def _torch():
    try:
        import torch
    except Exception:  # no torch in this interpreter: names only
        return None
    return torch


@functools.lru_cache(maxsize=4096)
def lookup(dotted: str):
    """The object at ``dotted`` (a path under ``torch``), or ``MISSING``."""
    parts = dotted.split(".")
    if parts[0] != "torch" or "__dict__" in parts:
        return MISSING
    torch = _torch()
    if torch is None:
        return MISSING
    obj = torch
    for part in parts[1:]:
        if part.startswith("__") and part.endswith("__"):
            return MISSING
        if isinstance(obj, types.ModuleType):  # never a module's lazy __getattr__: it would import (seconds)
            obj = module_attribute(obj, part)
            if obj is MISSING:
                return MISSING
            continue
        try:
            obj = getattr(obj, part)
        except Exception:  # AttributeError, or a torch attribute failing to load here
            return MISSING
    return obj


def module_attribute(module: types.ModuleType, name: str):
    """``getattr(module, name)`` for what the module holds (its namespace, a property of its class such as
    ``torch.backends.cudnn.deterministic``, an imported submodule), never through its lazy ``__getattr__``."""
    found = module.__dict__.get(name, MISSING)
    if found is not MISSING:
        return found
    if any(name in vars(k) for k in type(module).__mro__ if k is not types.ModuleType):
        try:
            return getattr(module, name)
        except Exception:
            return MISSING
    return sys.modules.get(f"{getattr(module, '__name__', '')}.{name}", MISSING)


def has(dotted: str) -> bool:
    return lookup(dotted) is not MISSING


def same(a: str, b: str) -> bool:
    """Both paths name one and the same torch object."""
    x = lookup(a)
    return x is not MISSING and x is lookup(b)


def is_module(dotted: str) -> bool | None:
    """True/False when the judge's torch can tell; None when the path is not found there."""
    obj = lookup(dotted)
    return None if obj is MISSING else isinstance(obj, types.ModuleType)


def foreign_module(dotted: str) -> str | None:
    """``torch.sys.modules`` -> ``sys.modules``: the path rebased on the last non-torch module it passes.

    torch's modules import ``sys``, ``os``, ``inspect`` and more as plain attributes,
    so a path under torch can reach any of them without naming them at its root.
    """
    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        obj = lookup(".".join(parts[: i + 1]))
        if isinstance(obj, types.ModuleType) and not obj.__name__.split(".")[0] == "torch":
            return ".".join([obj.__name__, *parts[i + 1:]])
    return None


def loaded() -> bool:
    """Whether the judge's torch is available to compare against (tests use it to say what they prove)."""
    return _torch() is not None and "torch" in sys.modules
