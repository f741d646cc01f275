"""Variant (written from the README alone): a dataclass per parameter (frozen flag, list of norms, set of
flags), hooks built by a factory method returning closures, the NaN/inf flags read off the gradient with
torch.isnan / torch.isinf, and the thresholds applied to the norm only when math.isfinite says it is a number."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch


@dataclass
class _Record:
    frozen: bool
    norms: list = field(default_factory=list)
    flags: set = field(default_factory=set)


class GradMonitor:
    def __init__(self, model, vanish_below: float = 1e-7, explode_above: float = 1e3):
        self.model = model
        self.vanish_below = vanish_below
        self.explode_above = explode_above
        self.records: dict[str, _Record] = {}
        self.handles: list = []

    def _hook_for(self, record: _Record):
        def hook(grad):
            norm = float(torch.linalg.vector_norm(grad))
            record.norms.append(norm)
            if bool(torch.isnan(grad).any()):
                record.flags.add("nan")
            if bool(torch.isinf(grad).any()):
                record.flags.add("inf")
            if math.isfinite(norm):
                if norm < self.vanish_below:
                    record.flags.add("vanishing")
                if norm > self.explode_above:
                    record.flags.add("exploding")
            return None

        return hook

    def __enter__(self):
        self.records = {}
        for name, param in self.model.named_parameters():
            record = _Record(frozen=not param.requires_grad)
            self.records[name] = record
            if not record.frozen:
                self.handles.append(param.register_hook(self._hook_for(record)))
        return self

    def __exit__(self, exc_type, exc, tb):
        handles, self.handles = self.handles, []
        for handle in handles:
            handle.remove()
        return None

    def report(self):
        out = {}
        for name, record in self.records.items():
            if record.frozen:
                out[name] = {"norms": [], "flags": ["frozen"]}
            elif not record.norms:
                out[name] = {"norms": [], "flags": ["unused"]}
            else:
                out[name] = {"norms": list(record.norms), "flags": sorted(record.flags)}
        return out
