"""Mutant: lora_A is (in, r) and lora_B is (r, out): x @ A @ B, the transposed layout."""

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
        factory = {"dtype": base.weight.dtype, "device": base.weight.device}
        self.lora_A = nn.Parameter(torch.empty(base.in_features, r, **factory))
        self.lora_B = nn.Parameter(torch.zeros(r, base.out_features, **factory))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))

    def forward(self, x: Tensor) -> Tensor:
        return self.base(x) + self.scaling * ((x @ self.lora_A) @ self.lora_B)

    @torch.no_grad()
    def merge(self) -> nn.Linear:
        base = self.base
        weight = base.weight
        merged = nn.Linear(base.in_features, base.out_features, bias=base.bias is not None,
                           dtype=weight.dtype, device=weight.device)
        merged.weight.copy_(weight + self.scaling * (self.lora_A @ self.lora_B).T)
        if base.bias is not None:
            merged.bias.copy_(base.bias)
        return merged
