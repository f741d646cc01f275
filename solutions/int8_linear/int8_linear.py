"""QuantLinear: an nn.Linear with int8 weights, one symmetric float32 scale per output row (reference)."""

from __future__ import annotations

import torch
from torch import nn


class QuantLinear(nn.Module):
    """Weight-only int8 linear layer: y = x @ (weight_int8 * scale[:, None]).T + bias."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.register_buffer("weight_int8", torch.zeros(out_features, in_features, dtype=torch.int8))
        self.register_buffer("scale", torch.ones(out_features, dtype=torch.float32))
        self.register_buffer("bias", torch.zeros(out_features, dtype=torch.float32) if bias else None)

    @classmethod
    @torch.no_grad()
    def from_float(cls, linear: nn.Linear) -> "QuantLinear":
        w = linear.weight.detach().to(torch.float32)
        q = cls(linear.in_features, linear.out_features, bias=linear.bias is not None)
        amax = w.abs().amax(dim=1)
        scale = torch.where(amax > 0, amax / 127, torch.ones_like(amax))
        q.weight_int8.copy_(torch.clamp(torch.round(w / scale[:, None]), -127, 127).to(torch.int8))
        q.scale.copy_(scale)
        if linear.bias is not None:
            q.bias.copy_(linear.bias.detach())
        return q

    def dequantize(self) -> torch.Tensor:
        return self.weight_int8.to(torch.float32) * self.scale[:, None]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.dequantize().to(x.dtype)
        out = x @ w.T
        if self.bias is not None:
            out = out + self.bias.to(x.dtype)
        return out

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
