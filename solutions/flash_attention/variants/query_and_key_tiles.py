"""Variant: tiles both the queries and the keys (FlashAttention-2's loop order), one head-batch matrix at a time.

Written from the README alone. For each tile of at most block_size queries it walks the key
blocks, skipping (under causal) the blocks that start after the tile's last query; the running
statistics live per tile, and the finished tile is written into a preallocated output.
"""

from __future__ import annotations

import math

import torch


def attention_forward(q, k, v, *, causal=False, block_size=128):
    B, H, Lq, D = q.shape
    Lk = k.shape[2]
    out = torch.empty(B, H, Lq, D, dtype=q.dtype, device=q.device)
    scale = 1.0 / math.sqrt(D)
    for q0 in range(0, Lq, block_size):
        q1 = min(q0 + block_size, Lq)
        qt = q[:, :, q0:q1].to(torch.float32)
        row_max = torch.full((B, H, q1 - q0, 1), -math.inf, device=q.device)
        row_sum = torch.zeros(B, H, q1 - q0, 1, device=q.device)
        o = torch.zeros(B, H, q1 - q0, D, device=q.device)
        last_key = min(Lk, q1) if causal else Lk  # under causal no query of this tile sees a key >= q1
        for k0 in range(0, last_key, block_size):
            k1 = min(k0 + block_size, last_key)
            s = torch.einsum("bhqd,bhkd->bhqk", qt, k[:, :, k0:k1].to(torch.float32)) * scale
            if causal:
                qi = torch.arange(q0, q1, device=q.device)[:, None]
                kj = torch.arange(k0, k1, device=q.device)[None, :]
                s = torch.where(kj <= qi, s, torch.tensor(-math.inf, device=q.device))
            new_max = torch.maximum(row_max, s.max(dim=-1, keepdim=True).values)
            alpha = torch.exp(row_max - new_max)
            p = torch.exp(s - new_max)
            row_sum = alpha * row_sum + p.sum(-1, keepdim=True)
            o = alpha * o + torch.einsum("bhqk,bhkd->bhqd", p, v[:, :, k0:k1].to(torch.float32))
            row_max = new_max
        out[:, :, q0:q1] = (o / row_sum).to(q.dtype)
    return out
