"""GradMonitor (variant, written from the README alone as a candidate would): hooks made with
functools.partial over a bound method, handles removed in a try/finally loop, a per-parameter
dict of norms plus a set of flags updated in the hook, the norm taken with Tensor.norm()."""

from __future__ import annotations

import functools
import math

import torch
from torch import nn


class GradMonitor:
    def __init__(self, model: nn.Module, vanish_below: float = 1e-7, explode_above: float = 1e3):
        self.model = model
        self.vanish_below = vanish_below
        self.explode_above = explode_above
        self.stats = {}
        self.handles = []

    def __enter__(self):
        for name, p in self.model.named_parameters():
            if p.requires_grad:
                self.stats[name] = {"norms": [], "flags": set()}
            else:
                self.stats[name] = None
        for name, p in self.model.named_parameters():
            if p.requires_grad:
                self.handles.append(p.register_hook(functools.partial(self._on_grad, name)))
        return self

    def _on_grad(self, name, grad):
        entry = self.stats[name]
        n = grad.norm().item()
        entry["norms"].append(n)
        if torch.isnan(grad).any():
            entry["flags"].add("nan")
        if torch.isinf(grad).any():
            entry["flags"].add("inf")
        if not math.isnan(n) and not math.isinf(n):
            if n < self.vanish_below:
                entry["flags"].add("vanishing")
            elif n > self.explode_above:
                entry["flags"].add("exploding")

    def __exit__(self, exc_type, exc, tb):
        try:
            while self.handles:
                self.handles.pop().remove()
        finally:
            self.handles = []
        return None

    def report(self):
        result = {}
        for name, entry in self.stats.items():
            if entry is None:
                result[name] = {"norms": [], "flags": ["frozen"]}
            elif not entry["norms"]:
                result[name] = {"norms": [], "flags": ["unused"]}
            else:
                result[name] = {"norms": list(entry["norms"]), "flags": list(entry["flags"])}
        return result
