"""Variant: a cos/sin table kept in float64 as a non-persistent buffer, grown on demand and indexed
by position; RoPE written on the two halves without rotate_half. RMSNorm normalises with the sum
of squares divided by dim, and returns v as a fresh clone.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.dim, self.eps = dim, eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        mean_square = torch.einsum("...d,...d->...", x, x).unsqueeze(-1) / self.dim
        return x / (mean_square + self.eps).sqrt() * self.weight


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim: int, base: float = 10000.0):
        super().__init__()
        if head_dim % 2 == 1:
            raise ValueError("head_dim %d is odd; RoPE rotates pairs of features" % head_dim)
        self.head_dim = head_dim
        exponent = torch.arange(head_dim // 2, dtype=torch.float64) * 2 / head_dim
        self.register_buffer("inv_freq", torch.pow(torch.tensor(float(base), dtype=torch.float64), -exponent),
                             persistent=False)
        self.register_buffer("cos_table", torch.empty(0, head_dim // 2, dtype=torch.float64), persistent=False)
        self.register_buffer("sin_table", torch.empty(0, head_dim // 2, dtype=torch.float64), persistent=False)

    def _grow(self, length: int) -> None:
        if length <= self.cos_table.shape[0]:
            return
        angles = torch.outer(torch.arange(length, dtype=torch.float64), self.inv_freq)
        self.cos_table, self.sin_table = angles.cos(), angles.sin()

    def _apply_rope(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        h = self.head_dim // 2
        x1, x2 = x[..., :h], x[..., h:]
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)

    def forward(self, q, k, v, positions=None):
        if positions is None:
            positions = torch.arange(q.shape[-2])
        self._grow(int(positions.max()) + 1)
        cos = self.cos_table[positions].to(q.dtype)
        sin = self.sin_table[positions].to(q.dtype)
        return self._apply_rope(q, cos, sin), self._apply_rope(k, cos, sin), v.clone()
