"""Variant: einsum forward, bias drawn before the weight from torch.rand, a buffer-free
Swish written as x / (1 + exp(-beta x)), the fixed beta kept as a plain float.

Correct: must earn full marks.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class CustomLinear(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        for name, value in (("in_features", in_features), ("out_features", out_features)):
            if value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value}")
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        # Another RNG consumption order than nn.Linear: bias first, then weight.
        if bias:
            b = (torch.rand(out_features) * 2 - 1) * bound
            self.register_parameter("bias", nn.Parameter(b))
        else:
            self.register_parameter("bias", None)
        w = (torch.rand(out_features, in_features) * 2 - 1) * bound
        self.register_parameter("weight", nn.Parameter(w))

    def forward(self, x: Tensor) -> Tensor:
        y = torch.einsum("...i,oi->...o", x, self.weight)
        return y if self.bias is None else y + self.bias

    def extra_repr(self) -> str:
        return "in_features={}, out_features={}, bias={}".format(
            self.in_features, self.out_features, self.bias is not None
        )


class Swish(nn.Module):
    def __init__(self, beta: float = 1.0, learnable: bool = False):
        super().__init__()
        self.learnable = learnable
        if learnable:
            self.register_parameter("beta", nn.Parameter(torch.tensor(beta, dtype=torch.get_default_dtype())))
        else:
            self.beta = beta

    def forward(self, x: Tensor) -> Tensor:
        return x / (1 + torch.exp(-self.beta * x))
