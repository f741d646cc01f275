"""Monitor gradient norms with tensor hooks: implement GradMonitor below. See README.md for the full contract."""

from __future__ import annotations

import torch
from torch import nn


class GradMonitor:
    """A context manager: ``with GradMonitor(model, vanish_below, explode_above) as mon: ...``.

    __enter__ puts one hook (``p.register_hook``) on every parameter whose requires_grad is
    True, none on frozen ones, and returns self; each gradient reaching a hook appends its
    L2 norm (a Python float) to that parameter's norms. __exit__ removes every hook it
    registered, also when the block raises, and does not swallow the exception.

    report() -> {name: {"norms": [float, ...], "flags": [str, ...]}} for every parameter of
    model.named_parameters(). Flags: "frozen" (exactly {"norms": [], "flags": ["frozen"]}),
    "unused" (trainable, no gradient in the whole block; no other flag), "nan", "inf"
    (some gradient held one), "vanishing" (some finite norm < vanish_below), "exploding"
    (some finite norm > explode_above). Hooks return None and change no gradient.
    """

    def __init__(self, model: nn.Module, vanish_below: float = 1e-7, explode_above: float = 1e3):
        raise NotImplementedError("GradMonitor.__init__")

    def __enter__(self) -> "GradMonitor":
        raise NotImplementedError("GradMonitor.__enter__")

    def __exit__(self, exc_type, exc, tb):
        raise NotImplementedError("GradMonitor.__exit__")

    def report(self) -> dict:
        raise NotImplementedError("GradMonitor.report")
