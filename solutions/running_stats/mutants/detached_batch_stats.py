"""Mutant: computes the batch mean and variance under torch.no_grad: the gradient of x misses
the terms through the statistics.

Should be caught by: test_gradients_through_batch_statistics.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class RunningNorm(nn.Module):
    """Normalises each feature over the batch; keeps running mean and variance for eval mode."""

    def __init__(self, num_features: int, momentum: float = 0.1, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.momentum = momentum
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        # Buffers: saved in state_dict, moved by .to(), never returned by parameters().
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, x: Tensor) -> Tensor:
        if self.training:
            if x.shape[0] < 2:
                raise ValueError(f"a training batch needs at least 2 rows to estimate a variance, got {x.shape[0]}")
            with torch.no_grad():
                mean = x.mean(dim=0)
                var = x.var(dim=0, unbiased=False)
            with torch.no_grad():  # the running statistics are bookkeeping, not part of the graph
                n = x.shape[0]
                m = self.momentum
                self.running_mean.mul_(1 - m).add_(mean, alpha=m)
                self.running_var.mul_(1 - m).add_(var * n / (n - 1), alpha=m)
                self.num_batches_tracked.add_(1)
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias

    def extra_repr(self) -> str:
        return f"{self.num_features}, momentum={self.momentum}, eps={self.eps}"
