"""The learnable beta is registered as beta_param, so state_dict() has 'beta_param', not 'beta'.

Recorded as: nothing
"""

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
        if learnable:
            self.beta_param = nn.Parameter(torch.tensor(float(beta)))
        else:
            self.beta_value = float(beta)

    def forward(self, x):
        beta = self.beta_param if hasattr(self, "beta_param") else self.beta_value
        return x * torch.sigmoid(beta * x)
