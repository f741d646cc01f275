"""Probes for the weighted_sharded_sampler exercise. They run INSIDE the sandbox.

They build the candidate's samplers from plain arguments, iterate them and return
what came out as int64 tensors (plus the Python types seen), never judging it.
``class_weights`` travels as a list of [class, weight] pairs (the protocol's dict
keys are strings) and is turned back into a dict here.
"""

from __future__ import annotations

import torch

import sampler


def _build(labels, kwargs):
    kwargs = dict(kwargs)
    if kwargs.get("class_weights") is not None:
        kwargs["class_weights"] = {int(c): w for c, w in kwargs["class_weights"]}
    return sampler.WeightedShardedSampler(list(labels), **kwargs)


def _iterate(s) -> dict:
    """One pass: the indices as an int64 tensor and the sorted names of the types yielded."""
    out = list(iter(s))
    types = sorted({type(i).__name__ for i in out})
    return {"indices": torch.tensor([int(i) for i in out], dtype=torch.int64), "types": types}


def init(labels, **kwargs):
    """Only construct the sampler (for the error checks); returns its len."""
    return len(_build(labels, kwargs))


def draw_many(labels, specs):
    """For each spec {"kwargs": {...}, "epochs": [e or None, ...]}: a new sampler, then one pass
    per entry of epochs (set_epoch(e) first unless e is None).

    Returns [{"len": len(sampler), "passes": [{"indices", "types"}, ...]}, ...].
    """
    results = []
    for spec in specs:
        s = _build(labels, spec["kwargs"])
        passes = []
        for epoch in spec.get("epochs", [None]):
            if epoch is not None:
                s.set_epoch(epoch)
            passes.append(_iterate(s))
        results.append({"len": len(s), "passes": passes})
    return results


def global_rng(labels, kwargs):
    """Two samplers with the same arguments, the global torch RNG seeded differently before each.

    Returns the global RNG state before and after building and iterating the first,
    and both passes.
    """
    torch.manual_seed(1234)
    before = torch.get_rng_state()
    first = _iterate(_build(labels, kwargs))
    after = torch.get_rng_state()
    torch.manual_seed(98765)
    torch.rand(17)
    second = _iterate(_build(labels, kwargs))
    return {"before": before, "after": after, "first": first, "second": second}
