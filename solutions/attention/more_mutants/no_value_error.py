"""Mutant: Never validates n_heads: n_heads=0 raises ZeroDivisionError, an indivisible
d_model is silently accepted.

Should be caught by: test_mha_rejects_n_heads_below_one,
test_mha_rejects_indivisible_d_model.
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
        mask = mask.expand(scores.shape)
        has_key = mask.any(dim=-1, keepdim=True)
        # Fully blocked rows are softmaxed unmasked (finite, discarded below).
        scores = scores.masked_fill(~mask & has_key, float("-inf"))
        weights = torch.softmax(scores, dim=-1).masked_fill(~mask, 0.0)
    return weights @ v, weights


class MultiHeadAttention(nn.Module):
    """Multi-head attention with separate query/key/value/output projections."""

    def __init__(self, d_model: int, n_heads: int, bias: bool = True):
        super().__init__()
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
