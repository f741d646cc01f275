"""Variant (written from the README alone): the masked softmax in log space (scores minus their logsumexp over
the allowed keys, exponentiated, blocked entries selected away with torch.where so no NaN ever forms), and the
heads split with unflatten/movedim and merged with flatten, projections applied by calling the Linear layers."""

from __future__ import annotations

import math

import torch
from torch import nn


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.size(-1))
    if mask is None:
        allowed = torch.ones_like(scores, dtype=torch.bool)
    else:
        allowed = mask.expand_as(scores) if mask.dim() <= scores.dim() else mask
    lowest = torch.finfo(scores.dtype).min
    safe = torch.where(allowed, scores, torch.full_like(scores, lowest))
    norm = torch.logsumexp(safe, dim=-1, keepdim=True)
    any_allowed = allowed.any(dim=-1, keepdim=True)
    weights = torch.where(allowed & any_allowed, torch.exp(safe - norm), torch.zeros_like(scores))
    return torch.matmul(weights, v), weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, bias: bool = True):
        super().__init__()
        if n_heads < 1:
            raise ValueError(f"n_heads must be at least 1, got n_heads={n_heads}")
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.n_heads = n_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    def _heads(self, x):
        # (B, T, d_model) -> (B, n_heads, T, d_head)
        return x.unflatten(-1, (self.n_heads, -1)).movedim(-2, 1)

    def forward(self, query, key, value, mask=None):
        q, k, v = self._heads(self.W_q(query)), self._heads(self.W_k(key)), self._heads(self.W_v(value))
        if mask is not None and mask.dim() == 2:
            mask = mask[None, None]
        out, weights = scaled_dot_product_attention(q, k, v, mask)
        return self.W_o(out.movedim(1, -2).flatten(-2)), weights
