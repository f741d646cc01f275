"""Variant: each key block's own softmax, merged into the running result by log-sum-exp.

Written from the README alone. Instead of carrying an unnormalised accumulator, it keeps the
normalised output so far and its log-sum-exp; each block's softmax output is folded in with
weights exp(lse_block - lse_new) and exp(lse_old - lse_new). Rows a causal block hides completely
have lse_block = -inf and a 0/0 block output, which the merge must keep out (torch.where).
"""

from __future__ import annotations

import math

import torch


def attention_forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = False,
                      block_size: int = 128) -> torch.Tensor:
    d = q.shape[-1]
    lq, lk = q.shape[-2], k.shape[-2]
    qf = q.to(torch.float32) / math.sqrt(d)
    out = torch.zeros(*q.shape[:-1], v.shape[-1], device=q.device)
    lse = torch.full((*q.shape[:-1], 1), float("-inf"), device=q.device)
    query_index = torch.arange(lq, device=q.device).unsqueeze(-1)
    starts = range(0, min(lk, lq) if causal else lk, block_size)
    for start in starts:
        kb = k[..., start:start + block_size, :].to(torch.float32)
        vb = v[..., start:start + block_size, :].to(torch.float32)
        s = qf @ kb.transpose(-1, -2)
        if causal:
            key_index = torch.arange(start, start + kb.shape[-2], device=q.device).unsqueeze(0)
            s = s.masked_fill(key_index > query_index, float("-inf"))
        block_lse = torch.logsumexp(s, dim=-1, keepdim=True)  # -inf where the block hides every key
        seen = torch.isfinite(block_lse)
        block_out = torch.softmax(s, dim=-1) @ vb  # NaN rows where nothing is seen: kept out below
        new_lse = torch.logaddexp(lse, block_lse)
        keep = torch.exp(lse - new_lse)
        add = torch.exp(block_lse - new_lse)
        out = torch.where(seen, out * keep + block_out * add, out)
        lse = torch.where(seen, new_lse, lse)
    return out.to(q.dtype)
