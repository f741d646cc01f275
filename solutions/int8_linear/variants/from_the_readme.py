"""QuantLinear (variant, written from the README alone as a candidate would): a Python loop over the
output rows computes each row's scale and int8 values, the buffers are assigned in from_float by
plain attribute assignment onto buffers __init__ registered, and forward uses F.linear on the
weight dequantised in x's dtype."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class QuantLinear(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.register_buffer("weight_int8", torch.zeros(out_features, in_features, dtype=torch.int8))
        self.register_buffer("scale", torch.ones(out_features, dtype=torch.float32))
        self.register_buffer("bias", torch.zeros(out_features) if bias else None)

    @classmethod
    def from_float(cls, linear: nn.Linear) -> "QuantLinear":
        layer = cls(linear.in_features, linear.out_features, linear.bias is not None)
        rows, scales = [], []
        for row in linear.weight.detach():
            m = row.abs().max().item()
            s = torch.tensor(m / 127 if m > 0 else 1.0, dtype=torch.float32)
            rows.append(torch.round(row / s).clamp(-127, 127).to(torch.int8))
            scales.append(s)
        layer.weight_int8 = torch.stack(rows)
        layer.scale = torch.stack(scales)
        if linear.bias is not None:
            layer.bias = linear.bias.detach().clone().float()
        return layer

    def dequantize(self) -> torch.Tensor:
        return self.weight_int8.float() * self.scale[:, None]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.dequantize().to(x.dtype)
        b = None if self.bias is None else self.bias.to(x.dtype)
        return F.linear(x, w, b)
