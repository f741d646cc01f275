"""Mutant: Masks with a large negative number (-1e9) instead of zeroing the blocked
weights: partially blocked rows come out right (exp underflows to 0), but a fully
blocked row gets uniform weights instead of zeros.

Should be caught by: test_sdpa_fully_blocked_rows, test_mha_fully_blocked_rows.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """softmax(q kᵀ / √E) v over the last two dims, with an optional bool mask (True = may attend)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        scores = scores.masked_fill(~mask, -1e9)
        weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


class MultiHeadAttention(nn.Module):
    """Multi-head attention with separate query/key/value/output projections."""

    def __init__(self, d_model: int, n_heads: int, bias: bool = True):
        super().__init__()
        if n_heads < 1:
            raise ValueError(f"n_heads must be at least 1, got n_heads={n_heads}")
        if d_model % n_heads != 0:
            raise ValueError(
                f"d_model must be divisible by n_heads, got d_model={d_model}, n_heads={n_heads}"
            )
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    def _split_heads(self, x: Tensor) -> Tensor:
        """(B, T, d_model) -> (B, n_heads, T, d_head)."""
        batch, length, _ = x.shape
        return x.view(batch, length, self.n_heads, self.d_head).transpose(1, 2)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        q = self._split_heads(self.W_q(query))
        k = self._split_heads(self.W_k(key))
        v = self._split_heads(self.W_v(value))
        # A (L, S) mask broadcasts over (B, n_heads) like any 4-D one.
        heads, weights = scaled_dot_product_attention(q, k, v, mask)
        batch, _, length, _ = heads.shape
        out = heads.transpose(1, 2).reshape(batch, length, self.d_model)
        return self.W_o(out), weights
