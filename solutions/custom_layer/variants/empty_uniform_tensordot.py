"""Variant (written from the README alone): parameters made with torch.empty and filled by nn.init.uniform_
with the explicit bound 1/sqrt(in_features); forward by torch.tensordot over the last dim plus the bias;
Swish keeps beta either as a Parameter or as a plain float and computes x * torch.sigmoid(beta * x);
extra_repr with str.format."""

from __future__ import annotations

import math

import torch
from torch import nn


class CustomLinear(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        for name, value in (("in_features", in_features), ("out_features", out_features)):
            if value < 1:
                raise ValueError("{} must be a positive integer, got {}".format(name, value))
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features)
        self.weight = nn.Parameter(nn.init.uniform_(torch.empty(out_features, in_features), -bound, bound))
        if bias:
            self.bias = nn.Parameter(nn.init.uniform_(torch.empty(out_features), -bound, bound))
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        out = torch.tensordot(x, self.weight, dims=([-1], [1]))
        return out if self.bias is None else out + self.bias

    def extra_repr(self) -> str:
        return "in_features={}, out_features={}, bias={}".format(
            self.in_features, self.out_features, self.bias is not None)


class Swish(nn.Module):
    def __init__(self, beta: float = 1.0, learnable: bool = False):
        super().__init__()
        self.beta = nn.Parameter(torch.tensor(float(beta))) if learnable else float(beta)

    def forward(self, x):
        return x * torch.sigmoid(self.beta * x)
