"""Reference: attention's forward pass in memory linear in the sequence lengths (FlashAttention's algorithm).

Keys and values are visited in blocks of ``block_size``. For every query the pass keeps a running
maximum ``m`` of its scores, the running sum ``l`` of exp(score - m) and the running weighted sum
``acc`` of the values; a block that raises the maximum first rescales ``l`` and ``acc`` by
exp(m_old - m_new). At the end ``acc / l`` is exactly softmax(q kᵀ / √D) v, and no tensor larger
than (B, H, Lq, block_size) was ever made.
"""

from __future__ import annotations

import math

import torch


def attention_forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = False,
                      block_size: int = 128) -> torch.Tensor:
    """softmax(q @ kᵀ / √D) @ v over key blocks of ``block_size``; causal: query i attends keys 0..i."""
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be a positive int, got {block_size!r}")
    b, h, lq, d = q.shape
    lk = k.shape[-2]
    qs = q.float() * (1.0 / math.sqrt(d))  # a scaled copy: the caller's q stays as it was
    m = torch.full((b, h, lq, 1), float("-inf"), device=q.device)
    total = torch.zeros((b, h, lq, 1), device=q.device)
    acc = torch.zeros((b, h, lq, v.shape[-1]), device=q.device)
    rows = torch.arange(lq, device=q.device).view(lq, 1)
    for start in range(0, lk, block_size):
        if causal and start >= lq:
            break  # every later key comes after every query
        stop = min(start + block_size, lk)
        scores = qs @ k[..., start:stop, :].float().transpose(-2, -1)  # (B, H, Lq, block)
        if causal:
            after = torch.arange(start, stop, device=q.device).view(1, -1) > rows
            scores = scores.masked_fill(after, float("-inf"))
        # Block 0 holds key 0, which every query may attend: from it on, m is finite, and a query whose
        # keys in a later block are all masked gets exp(-inf - m) = 0 from that block, never a NaN.
        m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
        p = torch.exp(scores - m_new)
        rescale = torch.exp(m - m_new)  # 0 on the first block (m = -inf), 1 when the maximum did not move
        total = total * rescale + p.sum(dim=-1, keepdim=True)
        acc = acc * rescale + p @ v[..., start:stop, :].float()
        m = m_new
    return (acc / total).to(q.dtype)
