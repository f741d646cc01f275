"""Variant (written from the README alone): attention with torch.einsum over the grown cache; top-p sampled in
sorted space, Llama-style, but with a stable argsort (ties keep the lower index first): the tail past the
crossing token zeroed in the sorted probabilities, one multinomial draw there, mapped back with gather."""

from __future__ import annotations

import math

import torch


def attend_step(q, k_new, v_new, cache):
    if cache is None:
        keys, values = k_new, v_new
    else:
        keys, values = torch.cat((cache[0], k_new), dim=2), torch.cat((cache[1], v_new), dim=2)
    scores = torch.einsum("bhqd,bhkd->bhqk", q, keys) / math.sqrt(q.shape[-1])
    out = torch.einsum("bhqk,bhkd->bhqd", torch.softmax(scores, dim=-1), values)
    return out, (keys, values)


def top_p_sample(logits, top_p, generator, temperature=1.0):
    if not (0.0 < top_p <= 1.0):
        raise ValueError(f"top_p must lie in (0, 1], got {top_p}")
    if not (temperature > 0.0):
        raise ValueError(f"temperature must be positive, got {temperature}")
    probs = torch.softmax(logits / temperature, dim=-1)
    order = torch.argsort(probs, dim=-1, descending=True, stable=True)
    ranked = torch.gather(probs, -1, order)
    above = torch.cumsum(ranked, dim=-1) - ranked       # mass of the tokens ranked before each one
    ranked = ranked.masked_fill(above >= top_p, 0.0)    # the first token always stays (above = 0)
    picked = torch.multinomial(ranked, 1, generator=generator)
    return torch.gather(order, -1, picked).squeeze(-1)
