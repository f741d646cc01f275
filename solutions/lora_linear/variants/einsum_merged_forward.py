"""Variant: forward through one merged weight (F.linear with W + s·BA), einsum, normal init of A,
merge by deep-copying the base and adding the update to the copy."""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        if not isinstance(r, int) or r < 1:
            raise ValueError(f"rank r must be a positive int, got r={r!r}")
        base.requires_grad_(False)
        self.base = base
        self.r, self.alpha = r, float(alpha)
        w = base.weight
        self.lora_A = nn.Parameter(torch.randn(r, w.shape[1], dtype=w.dtype, device=w.device) / r)
        self.lora_B = nn.Parameter(torch.zeros(w.shape[0], r, dtype=w.dtype, device=w.device))

    def _delta(self) -> Tensor:
        return torch.einsum("or,ri->oi", self.lora_B, self.lora_A) * (self.alpha / self.r)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.base.weight + self._delta(), self.base.bias)

    def merge(self) -> nn.Linear:
        merged = copy.deepcopy(self.base)
        with torch.no_grad():
            merged.weight.add_(self._delta())
        return merged
