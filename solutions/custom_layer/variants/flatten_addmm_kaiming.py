"""Variant: nn.init.kaiming_uniform_(a=√5) as nn.Linear does, a forward that flattens
the leading dims to 2-D for torch.addmm / torch.mm and reshapes back, bias=False as a
plain None attribute, and a Swish built on tanh with a non-persistent buffer for a
fixed beta.

Correct: must earn full marks.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class CustomLinear(nn.Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        if not in_features >= 1:
            raise ValueError("in_features must be >= 1")
        if not out_features >= 1:
            raise ValueError("out_features must be >= 1")
        self.in_features = in_features
        self.out_features = out_features
        self.weight = nn.Parameter(torch.empty((out_features, in_features)))
        self.bias = nn.Parameter(torch.empty(out_features)) if bias else None
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1]
            nn.init.uniform_(self.bias, -1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in))

    def forward(self, x: Tensor) -> Tensor:
        lead = x.shape[:-1]
        flat = x.reshape(-1, self.in_features)
        if self.bias is None:
            y = torch.mm(flat, self.weight.t())
        else:
            y = torch.addmm(self.bias, flat, self.weight.t())
        return y.reshape(*lead, self.out_features)

    def extra_repr(self) -> str:
        bias = self.bias is not None
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={bias}"


class Swish(nn.Module):
    def __init__(self, beta: float = 1.0, learnable: bool = False):
        super().__init__()
        if learnable:
            self.beta = nn.Parameter(torch.as_tensor(beta, dtype=torch.float32).clone())
        else:
            self.register_buffer("beta", torch.tensor(float(beta)), persistent=False)

    def forward(self, x: Tensor) -> Tensor:
        z = self.beta * x
        return x * 0.5 * (1 + torch.tanh(z / 2))
