"""Mutant: initialises the weight from a normal distribution (torch.randn scaled by
1/√in_features) instead of a uniform one.

Should be caught by: test_initialisation_distribution.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class CustomLinear(nn.Module):
    """y = x @ weightᵀ + bias, initialised like nn.Linear (uniform on ±1/√in_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        if in_features < 1:
            raise ValueError(f"in_features must be at least 1, got in_features={in_features}")
        if out_features < 1:
            raise ValueError(f"out_features must be at least 1, got out_features={out_features}")
        self.in_features = in_features
        self.out_features = out_features
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.in_features)
        with torch.no_grad():
            self.weight.copy_(torch.randn(self.out_features, self.in_features) * bound)
            if self.bias is not None:
                self.bias.uniform_(-bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        out = x @ self.weight.T
        if self.bias is not None:
            out = out + self.bias
        return out

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Swish(nn.Module):
    """x * sigmoid(beta * x); beta is a learnable scalar parameter when learnable=True."""

    def __init__(self, beta: float = 1.0, learnable: bool = False):
        super().__init__()
        if learnable:
            self.beta = nn.Parameter(torch.tensor(float(beta)))
        else:
            self.beta = float(beta)

    def forward(self, x: Tensor) -> Tensor:
        return x * torch.sigmoid(self.beta * x)
