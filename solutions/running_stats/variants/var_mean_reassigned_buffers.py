"""Variant: torch.var_mean for the batch statistics, rsqrt, and buffers re-assigned (not updated
in place) from detached values; the batch-of-one check comes first.

Correct: must earn full marks.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class RunningNorm(nn.Module):
    def __init__(self, num_features: int, momentum: float = 0.1, eps: float = 1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.zeros((), dtype=torch.int64))

    def forward(self, x: Tensor) -> Tensor:
        if not self.training:
            scale = torch.rsqrt(self.running_var + self.eps)
            return (x - self.running_mean) * scale * self.weight + self.bias
        n = x.size(0)
        if n <= 1:
            raise ValueError("RunningNorm needs a batch of at least 2 rows in train mode")
        var, mean = torch.var_mean(x, dim=0, correction=0)
        m = self.momentum
        # Module.__setattr__ keeps a tensor assigned to a buffer's name a buffer.
        self.running_mean = (1 - m) * self.running_mean + m * mean.detach()
        self.running_var = (1 - m) * self.running_var + m * var.detach() * (n / (n - 1))
        self.num_batches_tracked = self.num_batches_tracked + 1
        return (x - mean) * torch.rsqrt(var + self.eps) * self.weight + self.bias
