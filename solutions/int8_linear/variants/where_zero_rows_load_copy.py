"""Variant (written from the README alone): the scale computed for all rows at once with torch.where putting 1.0
on all-zero rows, int8 values from torch.round then clamp on the float quotient, from_float filling the buffers
of an empty layer with copy_ under torch.no_grad(); forward uses torch.matmul with the dequantised weight cast
to the input's dtype."""

from __future__ import annotations

import torch
from torch import nn


class QuantLinear(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.register_buffer("weight_int8", torch.zeros(out_features, in_features, dtype=torch.int8))
        self.register_buffer("scale", torch.ones(out_features, dtype=torch.float32))
        self.register_buffer("bias", torch.zeros(out_features, dtype=torch.float32) if bias else None)

    @classmethod
    def from_float(cls, linear: nn.Linear) -> "QuantLinear":
        layer = cls(linear.in_features, linear.out_features, bias=linear.bias is not None)
        with torch.no_grad():
            w = linear.weight.detach().float()
            peak = w.abs().amax(dim=1)
            scale = torch.where(peak > 0, peak / 127, torch.ones_like(peak))
            q = torch.clamp(torch.round(w / scale[:, None]), -127, 127).to(torch.int8)
            layer.weight_int8.copy_(q)
            layer.scale.copy_(scale)
            if linear.bias is not None:
                layer.bias.copy_(linear.bias.detach())
        return layer

    def dequantize(self) -> torch.Tensor:
        return self.weight_int8.float() * self.scale[:, None]

    def forward(self, x):
        out = torch.matmul(x, self.dequantize().to(x.dtype).t())
        if self.bias is not None:
            out = out + self.bias.to(x.dtype)
        return out
