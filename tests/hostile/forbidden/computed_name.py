"""Hostile (attention): the math kernel under a name built at run time. The judge cannot resolve
it (a dynamic-access flag); in the sandbox the kernel is absent (it matches SDPA's kernel patterns), so
every check that runs it raises and loses its credit."""

from __future__ import annotations

import torch
from torch import Tensor, nn

_math = getattr(torch, "_scaled_dot_product_" + "attention_math")


def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    if mask is None:
        return _math(q, k, v)
    mask = mask.expand(*q.shape[:-1], k.shape[-2])
    has_key = mask.any(dim=-1, keepdim=True)
    additive = torch.zeros(mask.shape, dtype=q.dtype).masked_fill(~(mask | ~has_key), float("-inf"))
    _, weights = _math(q, k, v, attn_mask=additive)
    weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, bias: bool = True):
        super().__init__()
        if n_heads < 1:
            raise ValueError(f"n_heads must be at least 1, got n_heads={n_heads}")
        if d_model % n_heads != 0:
            raise ValueError(f"d_model must be divisible by n_heads, got d_model={d_model}, n_heads={n_heads}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    def _split(self, x: Tensor) -> Tensor:
        b, t, _ = x.shape
        return x.view(b, t, self.n_heads, self.d_head).transpose(1, 2)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None):
        heads, weights = scaled_dot_product_attention(self._split(self.W_q(query)), self._split(self.W_k(key)),
                                                      self._split(self.W_v(value)), mask)
        b, _, t, _ = heads.shape
        return self.W_o(heads.transpose(1, 2).reshape(b, t, self.d_model)), weights
