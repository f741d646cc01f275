"""Probes for the kv_cache_decode exercise. They run INSIDE the sandbox.

Each probe takes plain data (CPU tensors, numbers, seeds), calls the candidate's
attend_step or top_p_sample and returns plain data: dicts of tensors, lists and
numbers. Probes never judge anything; the hidden checks (judge side) compute the
causal attention, the nuclei and the frequencies themselves.
"""

from __future__ import annotations

import torch

import kv_cache_decode
from grader.sandbox import probekit


def _pair(value):
    """(a, b) from a tuple or list of two, else None."""
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return value[0], value[1]
    return None


def _cache_report(cache):
    """A cache as the judge reads it: [k, v] (each a tensor or opaque), or the whole value opaque."""
    pair = _pair(cache)
    if pair is None:
        return probekit.opaque(cache)
    return [probekit.tensor(pair[0]), probekit.tensor(pair[1])]


def decode(q, k, v):
    """Feed tokens 0..T-1 of q, k, v ([B, H, T, D]) one at a time, starting from cache=None.

    Each step gets exactly the cache the previous step returned. Returns {"outs": [out per
    step], "caches": [the cache each step returned, as [k, v]]}, or the probe's "returned"
    answer when a step did not return a pair.
    """
    outs, caches, cache = [], [], None
    for t in range(q.shape[2]):
        token = (x[:, :, t:t + 1].clone() for x in (q, k, v))
        result = kv_cache_decode.attend_step(*token, cache)
        pair = _pair(result)
        if pair is None:
            return probekit.returned_instead(result)
        out, cache = pair
        outs.append(probekit.tensor(out))
        caches.append(_cache_report(cache))
    return {"outs": outs, "caches": caches}


def step_from_cache(k_cache, v_cache, tokens):
    """Step from one given cache (k_cache, v_cache) once per new token in ``tokens`` ([q, k_new, v_new] each).

    Every step gets the same given cache (two continuations of one prefix). The
    tensors the candidate is given are the probe's own copies; after all steps they
    come back as "after" ({"q", "k_new", "v_new"} per token, and "k_cache", "v_cache"),
    so the judge can see whether anything was changed in place.
    """
    given_k, given_v = k_cache.clone(), v_cache.clone()
    outs, caches, after = [], [], []
    for q, k_new, v_new in tokens:
        q, k_new, v_new = q.clone(), k_new.clone(), v_new.clone()
        result = kv_cache_decode.attend_step(q, k_new, v_new, (given_k, given_v))
        pair = _pair(result)
        if pair is None:
            return probekit.returned_instead(result)
        outs.append(probekit.tensor(pair[0]))
        caches.append(_cache_report(pair[1]))
        after.append({"q": q.clone(), "k_new": k_new.clone(), "v_new": v_new.clone()})
    return {"outs": outs, "caches": caches, "after": after, "k_cache": given_k.clone(), "v_cache": given_v.clone()}


def sample(logits, top_p, seed, *, temperature=None):
    """top_p_sample(logits, top_p, Generator seeded ``seed``[, temperature=]): {"tokens", "logits_after"}."""
    generator = torch.Generator().manual_seed(seed)
    given = logits.clone()
    kwargs = {} if temperature is None else {"temperature": temperature}
    tokens = kv_cache_decode.top_p_sample(given, top_p, generator, **kwargs)
    return {"tokens": probekit.tensor(tokens), "logits_after": given.clone()}


def sample_reproducibly(logits, top_p, seed, steps):
    """Three runs of ``steps`` calls each, every run on its own generator: seeded ``seed``, ``seed``
    again, then ``seed + 1``. The global RNG is seeded differently before each run (1, 2, 3).

    Returns {"runs": [[tokens per call] per run], "rng_before": [state], "rng_after": [state]}:
    the global RNG's state just before and just after each run.
    """
    runs, before, after = [], [], []
    for global_seed, s in ((1, seed), (2, seed), (3, seed + 1)):
        torch.manual_seed(global_seed)
        generator = torch.Generator().manual_seed(s)
        before.append(torch.get_rng_state())
        run = [probekit.tensor(kv_cache_decode.top_p_sample(logits.clone(), top_p, generator))
               for _ in range(steps)]
        after.append(torch.get_rng_state())
        runs.append(run)
    return {"runs": runs, "rng_before": before, "rng_after": after}


def sample_bad(top_p, temperature):
    """top_p_sample on a small fixed row with these arguments: True when nothing was raised (for the error check)."""
    kv_cache_decode.top_p_sample(torch.tensor([[1.0, 0.0, -1.0]]), top_p, torch.Generator().manual_seed(0),
                                 temperature=temperature)
    return True
