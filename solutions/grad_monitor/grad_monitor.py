"""GradMonitor: per-parameter gradient norms and flags, recorded by tensor hooks (reference)."""

from __future__ import annotations

import math

import torch
from torch import nn


class GradMonitor:
    """Inside ``with GradMonitor(model) as mon:`` every trainable parameter carries a hook that
    records the L2 norm of each gradient reaching it; ``mon.report()`` gives the norms and flags."""

    def __init__(self, model: nn.Module, vanish_below: float = 1e-7, explode_above: float = 1e3):
        self.model = model
        self.vanish_below = vanish_below
        self.explode_above = explode_above
        self._norms: dict[str, list[float]] = {}
        self._flags: dict[str, set[str]] = {}
        self._frozen: list[str] = []
        self._handles = []

    def __enter__(self) -> "GradMonitor":
        for name, p in self.model.named_parameters():
            self._norms[name] = []
            self._flags[name] = set()
            if p.requires_grad:
                self._handles.append(p.register_hook(self._hook(name)))
            else:
                self._frozen.append(name)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def _hook(self, name: str):
        def hook(grad: torch.Tensor) -> None:
            g = grad.detach()
            norm = float(torch.linalg.vector_norm(g))
            self._norms[name].append(norm)
            flags = self._flags[name]
            if torch.isnan(g).any():
                flags.add("nan")
            if torch.isinf(g).any():
                flags.add("inf")
            if math.isfinite(norm):
                if norm < self.vanish_below:
                    flags.add("vanishing")
                if norm > self.explode_above:
                    flags.add("exploding")
        return hook

    def report(self) -> dict[str, dict]:
        out = {}
        for name in self._norms:
            if name in self._frozen:
                out[name] = {"norms": [], "flags": ["frozen"]}
            elif not self._norms[name]:
                out[name] = {"norms": [], "flags": ["unused"]}
            else:
                out[name] = {"norms": list(self._norms[name]), "flags": sorted(self._flags[name])}
        return out
