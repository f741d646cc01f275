"""QuantLinear (variant): quantises by multiplying with 127 / amax (the reciprocal, not a division by
the scale) and rounds with floor(|t| + 0.5) * sign(t); an all-zero row gets a tiny positive scale
(amax clamped to 1e-12) instead of 1.0; forward multiplies the int8 matmul's output columns by the
scale (x @ q.T * scale) instead of dequantising the weight first."""

from __future__ import annotations

import torch
from torch import nn


class QuantLinear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.register_buffer("weight_int8", torch.empty((out_features, in_features), dtype=torch.int8))
        self.register_buffer("scale", torch.empty(out_features))
        if bias:
            self.register_buffer("bias", torch.empty(out_features))
        else:
            self.bias = None

    @classmethod
    def from_float(cls, linear):
        with torch.no_grad():
            w = linear.weight.detach().float()
            amax = w.abs().max(dim=1).values.clamp_min(1e-12)
            t = w * (127.0 / amax).unsqueeze(1)
            q = (t.abs() + 0.5).floor() * t.sign()
            layer = cls(linear.in_features, linear.out_features, bias=linear.bias is not None)
            layer.weight_int8.copy_(q.clamp(-127, 127).to(torch.int8))
            layer.scale.copy_(amax / 127.0)
            if layer.bias is not None:
                layer.bias.copy_(linear.bias.detach().float())
        return layer

    def dequantize(self):
        return self.weight_int8.float() * self.scale.unsqueeze(1)

    def forward(self, x):
        out = torch.matmul(x, self.weight_int8.to(x.dtype).t()) * self.scale.to(x.dtype)
        if self.bias is not None:
            out += self.bias.to(x.dtype)
        return out
