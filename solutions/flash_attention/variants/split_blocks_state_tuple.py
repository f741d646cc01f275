"""Variant (written from the README alone): the keys and values cut with torch.split into blocks, the running
state a (maximum, denominator, numerator) tuple folded over them by a small update function, the causal rule a
(Lq, block) boolean tile from torch.triu, the query scaled once in float32."""

from __future__ import annotations

import math

import torch


def _update(state, scores, values):
    maximum, denominator, numerator = state
    new_max = torch.maximum(maximum, scores.amax(dim=-1, keepdim=True))
    weights = torch.exp(scores - new_max)
    shrink = torch.exp(maximum - new_max)
    return new_max, denominator * shrink + weights.sum(-1, keepdim=True), numerator * shrink + weights @ values


def attention_forward(q, k, v, *, causal=False, block_size=128):
    lq, d = q.shape[-2], q.shape[-1]
    scaled_q = q.float() / math.sqrt(d)
    shape = (*q.shape[:-1], 1)
    state = (torch.full(shape, -math.inf, device=q.device), torch.zeros(shape, device=q.device),
             torch.zeros(*q.shape[:-1], v.shape[-1], device=q.device))
    first_key = 0
    for k_block, v_block in zip(torch.split(k, block_size, dim=-2), torch.split(v, block_size, dim=-2)):
        width = k_block.shape[-2]
        if causal and first_key >= lq:
            break
        scores = scaled_q @ k_block.float().transpose(-1, -2)
        if causal:
            # key first_key + j is after query i when j > i - first_key
            hidden = torch.triu(torch.ones(lq, width, dtype=torch.bool, device=q.device), diagonal=1 - first_key)
            scores = scores.masked_fill(hidden, -math.inf)
        state = _update(state, scores, v_block.float())
        first_key += width
    _, denominator, numerator = state
    return (numerator / denominator).to(q.dtype)
