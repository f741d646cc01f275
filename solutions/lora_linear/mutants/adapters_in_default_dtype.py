"""Mutant: lora_A and lora_B are created in the default dtype (float32), not the base weight's: a float64 base gets float32 adapters, cast to the input's dtype in forward."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class LoRALinear(nn.Module):
    """base(x) + (alpha / r) * x @ Aᵀ @ Bᵀ, with the base frozen and B starting at zero."""

    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        if r < 1:
            raise ValueError(f"r must be >= 1, got r={r}")
        self.base = base
        for p in base.parameters():
            p.requires_grad_(False)
        self.r = r
        self.alpha = alpha
        self.scaling = alpha / r
        factory = {"device": base.weight.device}
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features, **factory))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, **factory))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))

    def forward(self, x: Tensor) -> Tensor:
        A, B = self.lora_A.to(x.dtype), self.lora_B.to(x.dtype)
        return self.base(x) + self.scaling * ((x @ A.T) @ B.T)

    @torch.no_grad()
    def merge(self) -> nn.Linear:
        base = self.base
        weight = base.weight
        merged = nn.Linear(base.in_features, base.out_features, bias=base.bias is not None,
                           dtype=weight.dtype, device=weight.device)
        merged.weight.copy_(weight + self.scaling * (self.lora_B @ self.lora_A).to(weight.dtype))
        if base.bias is not None:
            merged.bias.copy_(base.bias)
        return merged
