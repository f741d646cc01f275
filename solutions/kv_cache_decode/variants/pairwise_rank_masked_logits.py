"""Variant: no sort at all. A token's rank mass (what the tokens ranked above it sum to) comes from a pairwise
comparison of probabilities, ties going to the lower index; the nucleus masks the logits with -inf and
torch.multinomial draws from their softmax. Attention runs through bmm on [batch * heads] with the scale
applied to a copy of q."""

from __future__ import annotations

import torch
from torch import Tensor


def attend_step(q: Tensor, k_new: Tensor, v_new: Tensor, cache):
    b, h, _, d = q.shape
    if cache is not None:
        k = torch.cat([cache[0], k_new], 2)
        v = torch.cat([cache[1], v_new], 2)
    else:
        k, v = k_new, v_new
    s = k.shape[2]
    scaled = q.reshape(b * h, 1, d) * d ** -0.5
    scores = torch.bmm(scaled, k.reshape(b * h, s, d).transpose(1, 2))
    out = torch.bmm(scores.softmax(-1), v.reshape(b * h, s, d)).reshape(b, h, 1, d)
    return out, (k, v)


def top_p_sample(logits: Tensor, top_p: float, generator: torch.Generator, temperature: float = 1.0) -> Tensor:
    if top_p <= 0 or top_p > 1:
        raise ValueError("top_p must be in (0, 1]")
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    scaled = logits / temperature
    probs = scaled.softmax(-1)
    vocab = probs.shape[-1]
    p_i, p_j = probs[:, :, None], probs[:, None, :]                  # [B, i, j]
    lower = torch.arange(vocab)[None, :] < torch.arange(vocab)[:, None]   # j < i
    above = (p_j > p_i) | ((p_j == p_i) & lower)                      # j ranked above i
    mass_above = (above * p_j).sum(-1)
    keep = mass_above < top_p
    masked = scaled.masked_fill(~keep, float("-inf"))
    return torch.multinomial(masked.softmax(-1), 1, generator=generator)[:, 0]
