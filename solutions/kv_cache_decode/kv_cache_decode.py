"""Reference solution for the kv_cache_decode exercise."""

from __future__ import annotations

import math

import torch
from torch import Tensor


def attend_step(q: Tensor, k_new: Tensor, v_new: Tensor,
                cache: tuple[Tensor, Tensor] | None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
    """One decoding step: append the new key and value to the cache, attend over all of it."""
    if cache is None:
        k, v = k_new, v_new
    else:
        k_cache, v_cache = cache
        k = torch.cat([k_cache, k_new], dim=2)
        v = torch.cat([v_cache, v_new], dim=2)
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = (q @ k.transpose(-2, -1)) * scale          # [B, H, 1, seq + 1]
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v                                   # [B, H, 1, head_dim]
    return out, (k, v)


def top_p_sample(logits: Tensor, top_p: float, generator: torch.Generator,
                 temperature: float = 1.0) -> Tensor:
    """Nucleus sampling: one token per row, drawn only from `generator`."""
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got top_p={top_p}")
    if not temperature > 0.0:
        raise ValueError(f"temperature must be > 0, got temperature={temperature}")
    probs = torch.softmax(logits / temperature, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    cumulative = sorted_probs.cumsum(dim=-1)
    # A token is in the nucleus when the tokens ranked above it sum to less than top_p:
    # that keeps the token that crosses top_p, and always the first one.
    keep_sorted = (cumulative - sorted_probs) < top_p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    nucleus = torch.where(keep, probs, torch.zeros_like(probs))
    nucleus = nucleus / nucleus.sum(dim=-1, keepdim=True)
    return torch.multinomial(nucleus, 1, generator=generator).squeeze(-1)
