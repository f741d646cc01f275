"""Variant: register_parameter, two F.linear calls for the update, scaling folded into B's product,
merge assigning fresh Parameters to a new nn.Linear."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int, alpha: float):
        super().__init__()
        if r <= 0:
            raise ValueError("LoRA rank r must be at least 1")
        self.base = base
        base.weight.requires_grad = False
        if base.bias is not None:
            base.bias.requires_grad = False
        self.scale = alpha / r
        out_features, in_features = base.weight.shape
        like = base.weight
        self.register_parameter("lora_A", nn.Parameter(like.new_empty(r, in_features)))
        self.register_parameter("lora_B", nn.Parameter(like.new_zeros(out_features, r)))
        bound = 1 / math.sqrt(in_features)
        nn.init.uniform_(self.lora_A, -bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        update = F.linear(F.linear(x, self.lora_A), self.lora_B)
        return self.base(x) + update * self.scale

    def merge(self) -> nn.Linear:
        base = self.base
        merged = nn.Linear(base.in_features, base.out_features, bias=base.bias is not None)
        weight = (base.weight + self.scale * self.lora_B @ self.lora_A).detach().clone()
        merged.weight = nn.Parameter(weight)
        if base.bias is not None:
            merged.bias = nn.Parameter(base.bias.detach().clone())
        return merged
