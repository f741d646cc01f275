"""kv_cache_decode with an unlisted public spelling of the forbidden computation: flex_attention computes the
same attention as SDPA, and no name or kernel pattern of the exercise matched it. Full marks on the grader before;
the attention family forbids it by name now.
"""

import warnings

import torch
from torch.nn.attention.flex_attention import flex_attention


def attend_step(q, k_new, v_new, cache):
    k = k_new if cache is None else torch.cat([cache[0], k_new], dim=2)
    v = v_new if cache is None else torch.cat([cache[1], v_new], dim=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return flex_attention(q, k, v), (k, v)


def top_p_sample(logits, top_p, generator, temperature=1.0):
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got top_p={top_p}")
    if not temperature > 0.0:
        raise ValueError(f"temperature must be > 0, got temperature={temperature}")
    probs = torch.softmax(logits / temperature, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    keep_sorted = (sorted_probs.cumsum(dim=-1) - sorted_probs) < top_p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    nucleus = torch.where(keep, probs, torch.zeros_like(probs))
    nucleus = nucleus / nucleus.sum(dim=-1, keepdim=True)
    return torch.multinomial(nucleus, 1, generator=generator).squeeze(-1)

