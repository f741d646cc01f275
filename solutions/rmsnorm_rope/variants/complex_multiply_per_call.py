"""Variant (written from the README alone, as a candidate would): RoPE as a complex multiplication.

Each pair (x[i], x[i+h]) is the complex number x[i] + j*x[i+h], multiplied by e^(j*p*theta_i)
(torch.polar); the frequencies are built on every call in the input's own dtype (float32 for
float32, float64 for float64), with no table kept. RMSNorm divides by torch.sqrt instead of
multiplying by rsqrt.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.dim = dim
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        rms = torch.sqrt((x * x).mean(-1, keepdim=True) + self.eps)
        return self.weight * (x / rms)


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim: int, base: float = 10000.0):
        super().__init__()
        if head_dim % 2:
            raise ValueError(f"RotaryEmbedding: head_dim must be even, got head_dim={head_dim}")
        self.head_dim = head_dim
        self.base = float(base)

    def _rotate(self, x: Tensor, angles: Tensor) -> Tensor:
        h = self.head_dim // 2
        z = torch.complex(x[..., :h], x[..., h:])
        turned = z * torch.polar(torch.ones_like(angles), angles)
        return torch.cat((turned.real, turned.imag), dim=-1)

    def forward(self, q, k, v, positions=None):
        seq = q.shape[-2]
        dtype = q.dtype
        if positions is None:
            positions = torch.arange(seq, device=q.device)
        i = torch.arange(self.head_dim // 2, dtype=dtype, device=q.device)
        theta = self.base ** (-2.0 * i / self.head_dim)
        angles = positions.to(dtype)[:, None] * theta[None, :]
        return self._rotate(q, angles), self._rotate(k, angles), v
