"""Probes for the warmup_cosine_scheduler exercise. They run INSIDE the sandbox.

Each probe builds a tiny SGD optimizer with one param group per base lr, drives the
candidate's WarmupCosine and returns the lrs it saw as plain data. Probes never
judge: the hidden checks compute the expected schedule judge-side.
"""

from __future__ import annotations

import io

import torch

import scheduler
from grader.sandbox import probekit


def _optimizer(base_lrs) -> torch.optim.Optimizer:
    groups = [{"params": [torch.nn.Parameter(torch.zeros(1))], "lr": lr} for lr in base_lrs]
    return torch.optim.SGD(groups)


def _num(value):
    if type(value) in (int, float):
        return float(value)
    return probekit.opaque(value)


def _lrs(opt) -> list:
    return [_num(group["lr"]) for group in opt.param_groups]


def _last(sched):
    last = sched.get_last_lr()
    return [_num(v) for v in last] if isinstance(last, (list, tuple)) else _num(last)


def _steps(opt, sched, n: int, lrs: list, last: list) -> None:
    for _ in range(n):
        opt.step()
        sched.step()
        lrs.append(_lrs(opt))
        last.append(_last(sched))


def sched_run(base_lrs, steps, **kwargs):
    """WarmupCosine(SGD(groups with base_lrs), **kwargs), then `steps` step() calls.

    Returns {"lrs": group lrs for t = 0..steps, "last": get_last_lr() for t = 1..steps}.
    """
    opt = _optimizer(base_lrs)
    sched = scheduler.WarmupCosine(opt, **kwargs)
    lrs, last = [_lrs(opt)], []
    _steps(opt, sched, steps, lrs, last)
    return {"lrs": lrs, "last": last}


def _groups(opt) -> list:
    """Every param group's settings (all but its params), as plain data."""
    plain = (bool, int, float, str, type(None))
    return [{k: v if type(v) in plain else repr(v)[:60] for k, v in g.items() if k != "params"}
            for g in opt.param_groups]


def groups_after_refusal(base_lrs, **kwargs):
    """The optimizer's param groups before and after WarmupCosine(optimizer, **kwargs) raised
    (``after`` is None when it did not raise: the refusal itself is another call's business)."""
    opt = _optimizer(base_lrs)
    before = _groups(opt)
    try:
        scheduler.WarmupCosine(opt, **kwargs)
    except Exception:
        return {"before": before, "after": _groups(opt)}
    return {"before": before, "after": None}


def _through_weights_only(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def _refused_part(opt, sched):
    """Which state_dict() the safe load refuses: the scheduler's (the candidate's own) or the optimizer's."""
    for name, part in (("scheduler", sched.state_dict), ("optimizer", opt.state_dict)):
        try:
            _through_weights_only(part())
        except Exception:
            return name
    return "checkpoint"


def sched_resume(base_lrs, before, after, **kwargs):
    """`before` steps, a checkpoint through torch.save / torch.load(weights_only=True), a
    fresh optimizer and scheduler that load it (optimizer first), then `after` steps.

    Returns {"lrs": group lrs right after loading and after each later step, "last": ...}, or
    {"refused": "scheduler" | "optimizer", "error": ...} when torch.load(weights_only=True) refuses
    the checkpoint (or torch.save cannot write it).
    """
    opt = _optimizer(base_lrs)
    sched = scheduler.WarmupCosine(opt, **kwargs)
    _steps(opt, sched, before, [], [])
    try:
        checkpoint = _through_weights_only({"optimizer": opt.state_dict(), "scheduler": sched.state_dict()})
    except Exception as e:  # the candidate's state_dict() holds what a safe load refuses: say which, and why
        return {"refused": _refused_part(opt, sched), "error": f"{type(e).__name__}: {str(e)[:4000]}"}
    opt = _optimizer(base_lrs)
    sched = scheduler.WarmupCosine(opt, **kwargs)
    opt.load_state_dict(checkpoint["optimizer"])
    sched.load_state_dict(checkpoint["scheduler"])
    lrs, last = [_lrs(opt)], []
    _steps(opt, sched, after, lrs, last)
    return {"lrs": lrs, "last": last}
