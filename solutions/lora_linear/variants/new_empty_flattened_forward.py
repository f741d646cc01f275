"""Variant (written from the prompt alone): A and B built with new_zeros/new_empty from the base weight, forward through F.linear-free matmuls on the flattened input, merge through a fresh nn.Linear whose parameters are replaced."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class LoRALinear(nn.Module):
    """A frozen nn.Linear plus (alpha / r) * B A."""

    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        if not isinstance(r, int) or r < 1:
            raise ValueError(f"rank r must be a positive int, got r={r!r}")
        self.base = base
        base.weight.requires_grad = False
        if base.bias is not None:
            base.bias.requires_grad = False
        w = base.weight
        self.lora_A = nn.Parameter(w.new_empty(r, w.shape[1]))
        self.lora_B = nn.Parameter(w.new_zeros(w.shape[0], r))
        bound = 1.0 / math.sqrt(w.shape[1])
        nn.init.uniform_(self.lora_A, -bound, bound)
        self.r, self.alpha = r, alpha

    @property
    def scaling(self) -> float:
        return self.alpha / self.r

    def forward(self, x: Tensor) -> Tensor:
        flat = x.reshape(-1, x.shape[-1])
        delta = (flat @ self.lora_A.t()) @ self.lora_B.t()
        return self.base(x) + self.scaling * delta.reshape(*x.shape[:-1], delta.shape[-1])

    def merge(self) -> nn.Linear:
        w = self.base.weight
        merged = nn.Linear(w.shape[1], w.shape[0], bias=self.base.bias is not None, device=w.device, dtype=w.dtype)
        with torch.no_grad():
            merged.weight = nn.Parameter(w.detach() + self.scaling * (self.lora_B.detach() @ self.lora_A.detach()))
            if self.base.bias is not None:
                merged.bias = nn.Parameter(self.base.bias.detach().clone())
        return merged
