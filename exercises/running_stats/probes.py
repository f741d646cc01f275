"""Probes for the running_stats exercise. They run INSIDE the sandbox.

Each probe takes plain data (numbers, strings, CPU tensors), builds the
candidate's RunningNorm, drives it and returns plain data. Probes never judge
anything; the hidden checks (judge side) compare what comes back with
nn.BatchNorm1d driven the same way.

The exercise forbids the batch-norm APIs, and the worker charges a check for any
call of them made while a probe runs, whoever makes it: so the probes never
touch them. BatchNorm1d's state_dicts are built judge-side and sent in as plain
tensors.
"""

from __future__ import annotations

import torch
from torch import nn

import running_stats
from grader.sandbox import probekit
from grader.sandbox.probekit import tensor as _plain
from shared import STATS, prepared


def _build(num_features, kwargs, seed=0):
    return probekit.seeded(running_stats.RunningNorm, num_features, seed=seed, **kwargs)


def _stats(m) -> dict:
    """The running statistics as the module holds them, with their autograd state."""
    out = {}
    for name in STATS:
        value = getattr(m, name, None)
        if isinstance(value, torch.Tensor):
            out[name] = {"value": value.detach().clone(), "requires_grad": bool(value.requires_grad),
                         "grad_fn": None if value.grad_fn is None else type(value.grad_fn).__name__}
        else:
            out[name] = {"value": _plain(value), "requires_grad": False, "grad_fn": None}
    return out


def describe(num_features, kwargs=None):
    """RunningNorm(num_features, **kwargs): how it holds its tensors, before any forward."""
    m = _build(num_features, kwargs or {})
    return {
        "is_module": isinstance(m, nn.Module),
        "parameters": [[n, list(p.shape), bool(p.requires_grad)] for n, p in m.named_parameters()],
        "buffers": [[n, list(b.shape), str(b.dtype)] for n, b in m.named_buffers()],
        "state_dict": {str(k): _plain(v) for k, v in m.state_dict().items()},
        "weight": _plain(getattr(m, "weight", None)),
        "bias": _plain(getattr(m, "bias", None)),
        "stats": _stats(m),
    }


def drive(num_features, kwargs, steps, *, weight=None, bias=None, dtype=None, load=None):
    """Build RunningNorm(num_features, **kwargs) and run ``steps`` through it.

    The module is ``shared.prepared`` (dtype, load, weight and bias, in that order) first. steps: [[mode, x, grad_out or None], ...]
    with mode "train" or "eval": the module is put in that mode, out = m(x), and
    with grad_out, sum(out * grad_out).backward() (gradients of x, weight, bias
    recorded, then cleared).

    Returns {"steps": [{"out", "stats", "grads"}...], "state_dict": ...,
    "parameters": [names]} (the last two after every step).
    """
    m = prepared(_build(num_features, kwargs), weight=weight, bias=bias, dtype=dtype, load=load)
    trace = []
    for mode, x, grad_out in steps:
        m.train(mode == "train")
        if grad_out is not None:
            x.requires_grad_(True)
        out = m(x)
        record = {"out": _plain(out), "stats": _stats(m), "grads": None}
        if grad_out is not None:
            (out * grad_out).sum().backward()
            record["grads"] = {"x": _plain(x.grad) if x.grad is not None else None,
                               "weight": _plain(m.weight.grad) if m.weight.grad is not None else None,
                               "bias": _plain(m.bias.grad) if m.bias.grad is not None else None}
            m.zero_grad(set_to_none=True)
        trace.append(record)
    return {
        "steps": trace,
        "state_dict": {str(k): _plain(v) for k, v in m.state_dict().items()},
        "parameters": [n for n, _ in m.named_parameters()],
    }
