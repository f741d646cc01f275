"""Variant written from the README alone, as a candidate would: einsum attention with a hand-written softmax,
and sampling in sorted order by inverse CDF (one torch.rand draw per row from the generator, searchsorted),
mapped back to vocabulary indices through the sort's indices."""

from __future__ import annotations

import math

import torch
from torch import Tensor


def attend_step(q: Tensor, k_new: Tensor, v_new: Tensor, cache):
    if cache is None:
        keys, values = k_new, v_new
    else:
        keys = torch.cat((cache[0], k_new), dim=-2)
        values = torch.cat((cache[1], v_new), dim=-2)
    scores = torch.einsum("bhqd,bhkd->bhqk", q, keys) / math.sqrt(q.size(-1))
    scores = scores - scores.amax(dim=-1, keepdim=True)
    weights = scores.exp()
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return torch.einsum("bhqk,bhkd->bhqd", weights, values), (keys, values)


def top_p_sample(logits: Tensor, top_p: float, generator: torch.Generator, temperature: float = 1.0) -> Tensor:
    if not (0 < top_p <= 1):
        raise ValueError(f"top_p must lie in (0, 1], got {top_p!r} for top_p")
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got temperature={temperature!r}")
    probs = torch.softmax(logits / temperature, dim=-1)
    ranked, index = probs.sort(dim=-1, descending=True, stable=True)
    vocab = ranked.size(-1)
    # Tokens needed: those whose running sum is still below top_p, plus the one that crosses it.
    size = ((ranked.cumsum(-1) < top_p).sum(-1) + 1).clamp(max=vocab)
    in_nucleus = torch.arange(vocab) < size[:, None]
    cdf = torch.where(in_nucleus, ranked, torch.zeros_like(ranked)).cumsum(-1)
    cdf = cdf / cdf[:, -1:]
    u = torch.rand(ranked.size(0), 1, generator=generator, dtype=cdf.dtype)
    position = torch.searchsorted(cdf, u, right=True)
    position = torch.minimum(position, (size - 1)[:, None])
    return index.gather(-1, position).squeeze(-1)
