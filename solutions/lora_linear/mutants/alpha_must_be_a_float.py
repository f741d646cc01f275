"""Mutant: reads the signature's `alpha: float` as a demand and refuses an int alpha with a TypeError.

The README says alpha may come as an int or a float. Should be caught by test_alpha_may_be_an_int only
(the other checks draw float alphas).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        if r < 1:
            raise ValueError(f"r must be >= 1, got r={r}")
        if not isinstance(alpha, float):
            raise TypeError(f"alpha must be a float, got {type(alpha).__name__}")
        self.base = base
        for p in base.parameters():
            p.requires_grad_(False)
        self.r = r
        self.alpha = alpha
        self.scaling = alpha / r
        factory = {"dtype": base.weight.dtype, "device": base.weight.device}
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features, **factory))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, **factory))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))

    def forward(self, x: Tensor) -> Tensor:
        return self.base(x) + self.scaling * ((x @ self.lora_A.T) @ self.lora_B.T)

    @torch.no_grad()
    def merge(self) -> nn.Linear:
        base = self.base
        merged = nn.Linear(base.in_features, base.out_features, bias=base.bias is not None,
                           dtype=base.weight.dtype, device=base.weight.device)
        merged.weight.copy_(base.weight + self.scaling * (self.lora_B @ self.lora_A))
        if base.bias is not None:
            merged.bias.copy_(base.bias)
        return merged
