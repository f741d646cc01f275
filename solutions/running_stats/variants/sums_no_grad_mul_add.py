"""Variant (written from the README alone): batch statistics from explicit sums (sum / N and the sum of squared
deviations divided by N and by N - 1), the buffers updated in place with mul_ and add_ inside torch.no_grad(),
num_batches_tracked advanced with add_(1), and one normalisation expression for both modes."""

from __future__ import annotations

import torch
from torch import nn


class RunningNorm(nn.Module):
    def __init__(self, num_features: int, momentum: float = 0.1, eps: float = 1e-5):
        super().__init__()
        self.num_features, self.momentum, self.eps = num_features, momentum, eps
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, x):
        if self.training:
            n = x.shape[0]
            if n < 2:
                raise ValueError(f"a train-mode batch needs at least 2 rows, got {n}")
            mean = x.sum(dim=0) / n
            squares = ((x - mean) ** 2).sum(dim=0)
            var = squares / n
            with torch.no_grad():
                m = self.momentum
                self.running_mean.mul_(1 - m).add_(mean.detach() * m)
                self.running_var.mul_(1 - m).add_(squares.detach() / (n - 1) * m)
                self.num_batches_tracked.add_(1)
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias
