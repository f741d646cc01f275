"""Mutant: computes the whole (Lq, Lk) score matrix and its softmax at once: attention as written in the
textbook. The numbers are right; the memory grows with Lq × Lk, which is what the exercise exists to avoid.

Should be caught by test_memory_grows_linearly_with_the_sequence and test_memory_with_many_more_keys_than_queries.
"""

from __future__ import annotations

import math

import torch


def attention_forward(q, k, v, *, causal=False, block_size=128):
    scores = (q.float() @ k.float().transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if causal:
        lq, lk = scores.shape[-2:]
        hidden = torch.ones(lq, lk, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v.float()).to(q.dtype)
