"""Variant: computes the unbiased variance first and derives the biased one from it; updates
the buffers in place with lerp_ (running + momentum * (batch - running)); registers the
buffers in a loop; normalises with a centred x and a standard deviation.

Correct: must earn full marks.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class RunningNorm(nn.Module):
    def __init__(self, num_features: int, momentum: float = 0.1, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.momentum = momentum
        self.eps = eps
        self.weight = nn.Parameter(torch.full((num_features,), 1.0))
        self.bias = nn.Parameter(torch.full((num_features,), 0.0))
        initial = {
            "running_mean": torch.zeros(num_features),
            "running_var": torch.ones(num_features),
            "num_batches_tracked": torch.tensor(0),
        }
        for name, value in initial.items():
            self.register_buffer(name, value)

    def _batch_stats(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        n = x.shape[0]
        if n < 2:
            raise ValueError(f"expected more than 1 value per channel when training, got a batch of {n}")
        mean = x.sum(0) / n
        centred = x - mean
        unbiased = (centred * centred).sum(0) / (n - 1)
        return mean, unbiased * (n - 1) / n, unbiased

    def forward(self, x: Tensor) -> Tensor:
        if self.training:
            mean, var, unbiased = self._batch_stats(x)
            with torch.no_grad():
                self.running_mean.lerp_(mean, self.momentum)
                self.running_var.lerp_(unbiased, self.momentum)
                self.num_batches_tracked += 1
        else:
            mean, var = self.running_mean, self.running_var
        std = (var + self.eps).sqrt()
        return self.weight * ((x - mean) / std) + self.bias
