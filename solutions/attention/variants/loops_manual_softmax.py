"""Correct variant: a hand-written masked softmax and an explicit loop over heads.

The softmax subtracts the row maximum over a finfo.min-filled copy, multiplies by
the mask (so blocked weights are exactly 0) and divides by a denominator that is
replaced by 1 where a row has no key left. MultiHeadAttention slices each head's
features out of the projections and calls the function once per head.
Must get full marks.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.size(-1))
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    exp = torch.exp(filled - filled.amax(dim=-1, keepdim=True)) * mask
    total = exp.sum(dim=-1, keepdim=True)
    weights = exp / torch.where(total > 0, total, torch.ones_like(total))
    return torch.matmul(weights, v), weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, bias: bool = True):
        super().__init__()
        if not n_heads >= 1:
            raise ValueError("n_heads must be a positive integer")
        if d_model % n_heads != 0:
            raise ValueError("d_model must be divisible by n_heads")
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, query, key, value, mask=None):
        q_all, k_all, v_all = self.W_q(query), self.W_k(key), self.W_v(value)
        outs, weights = [], []
        for h in range(self.n_heads):
            cols = slice(h * self.d_head, (h + 1) * self.d_head)
            head_mask = mask
            if mask is not None and mask.dim() == 4:
                head_mask = mask[:, h if mask.size(1) > 1 else 0]  # (B or 1, L or 1, S)
            out_h, w_h = scaled_dot_product_attention(
                q_all[..., cols], k_all[..., cols], v_all[..., cols], head_mask
            )
            outs.append(out_h)
            weights.append(w_h.expand(query.size(0), -1, -1))
        return self.W_o(torch.cat(outs, dim=-1)), torch.stack(weights, dim=1)
