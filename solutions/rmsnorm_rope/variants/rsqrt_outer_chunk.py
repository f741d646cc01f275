"""Variant (written from the README alone), in the Hugging Face style: RMSNorm by torch.rsqrt of the mean
square; RoPE with a non-persistent float64 inv_freq buffer, the angles from torch.outer(positions, inv_freq),
cos and sin concatenated with themselves, and rotate_half built from torch.chunk."""

from __future__ import annotations

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        scale = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * scale * self.weight.to(x.dtype)


def rotate_half(x):
    first, second = torch.chunk(x, 2, dim=-1)
    return torch.cat((-second, first), dim=-1)


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim: int, base: float = 10000.0):
        super().__init__()
        if head_dim % 2:
            raise ValueError(f"head_dim must be even, got {head_dim}")
        exponents = torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim
        self.register_buffer("inv_freq", base ** -exponents, persistent=False)

    def forward(self, q, k, v, positions=None):
        seq = q.shape[-2]
        if positions is None:
            positions = torch.arange(seq, device=q.device)
        angles = torch.outer(positions.to(torch.float64), self.inv_freq.to(q.device))
        table = torch.cat((angles, angles), dim=-1)
        cos, sin = table.cos().to(q.dtype), table.sin().to(q.dtype)
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin, v
