"""Reference solution for rmsnorm_rope: RMSNorm and rotary position embeddings."""

from __future__ import annotations

import torch
from torch import Tensor, nn


class RMSNorm(nn.Module):
    """y = x / sqrt(mean(x**2, dim=-1, keepdim=True) + eps) * weight."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        mean_square = x.pow(2).mean(dim=-1, keepdim=True)
        return x * torch.rsqrt(mean_square + self.eps) * self.weight


def rotate_half(x: Tensor) -> Tensor:
    """(x1, x2) -> (-x2, x1), the halves of the last dim."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class RotaryEmbedding(nn.Module):
    """Rotary position embeddings, "rotate half" pairing (i, i + head_dim/2)."""

    def __init__(self, head_dim: int, base: float = 10000.0):
        super().__init__()
        if head_dim % 2 != 0:
            raise ValueError(f"head_dim must be even, got {head_dim}")
        self.head_dim = head_dim
        self.base = base

    def _cos_sin(self, positions: Tensor, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
        """cos and sin of the angles, (seq, head_dim), computed in float64 and cast to ``dtype``."""
        exponents = torch.arange(0, self.head_dim, 2, dtype=torch.float64) / self.head_dim
        inv_freq = self.base ** -exponents                             # theta_i = base^(-2i/d)
        angles = positions.to(torch.float64)[:, None] * inv_freq[None, :]   # (seq, d/2)
        angles = torch.cat((angles, angles), dim=-1)                   # (seq, d)
        return angles.cos().to(dtype), angles.sin().to(dtype)

    def forward(self, q: Tensor, k: Tensor, v: Tensor, positions: Tensor | None = None
                ) -> tuple[Tensor, Tensor, Tensor]:
        seq = q.shape[-2]
        if positions is None:
            positions = torch.arange(seq)
        cos, sin = self._cos_sin(positions, q.dtype)
        q_rot = q * cos + rotate_half(q) * sin
        k_rot = k * cos + rotate_half(k) * sin
        return q_rot, k_rot, v
