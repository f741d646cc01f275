"""Variant (written from the README alone): A drawn with a bounded uniform (1/sqrt(in_features)) through torch.empty
with the base weight's dtype and device; forward as base(x) plus the update applied through the rank first
((x @ A^T) @ B^T); merge builds an nn.Linear and fills it with load_state_dict from detached tensors."""

from __future__ import annotations

import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        if r < 1:
            raise ValueError(f"the rank r must be at least 1 (got r={r})")
        self.base = base
        for p in base.parameters():
            p.requires_grad_(False)
        self.r, self.alpha = r, alpha
        self.scaling = alpha / r
        w = base.weight
        bound = 1.0 / math.sqrt(base.in_features)
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features, dtype=w.dtype, device=w.device).uniform_(-bound, bound))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, dtype=w.dtype, device=w.device))

    def forward(self, x):
        update = (x @ self.lora_A.t()) @ self.lora_B.t()
        return self.base(x) + self.scaling * update

    def merge(self) -> nn.Linear:
        with torch.no_grad():
            weight = self.base.weight + self.scaling * (self.lora_B @ self.lora_A)
            has_bias = self.base.bias is not None
            merged = nn.Linear(self.base.in_features, self.base.out_features, bias=has_bias,
                               dtype=weight.dtype, device=weight.device)
            state = {"weight": weight.detach().clone()}
            if has_bias:
                state["bias"] = self.base.bias.detach().clone()
            merged.load_state_dict(state)
        return merged
