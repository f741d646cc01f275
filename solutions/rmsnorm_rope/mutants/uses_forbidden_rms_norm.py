"""Mutant: RMSNorm calls torch.nn.functional.rms_norm, which this exercise forbids (the values are right)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


def rotate_half(x: Tensor) -> Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim: int, base: float = 10000.0):
        super().__init__()
        if head_dim % 2 != 0:
            raise ValueError(f"head_dim must be even, got {head_dim}")
        self.head_dim = head_dim
        self.base = base

    def forward(self, q: Tensor, k: Tensor, v: Tensor, positions: Tensor | None = None):
        if positions is None:
            positions = torch.arange(q.shape[-2])
        inv_freq = self.base ** -(torch.arange(0, self.head_dim, 2, dtype=torch.float64) / self.head_dim)
        angles = positions.to(torch.float64)[:, None] * inv_freq
        angles = torch.cat((angles, angles), dim=-1)
        cos, sin = angles.cos().to(q.dtype), angles.sin().to(q.dtype)
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin, v
