"""Probes for the grad_monitor exercise. They run INSIDE the sandbox.

Each probe builds ``shared.Net`` with the weights the judge sent, runs the judge's
training steps (``shared.run_step``) inside ``with GradMonitor(model, ...)`` and returns
plain data: the candidate's report (anything that is not plain data comes back as an
opaque description), every parameter's gradient afterwards, and how many hooks every
parameter and module holds before, inside and after the block. Probes never judge.
"""

from __future__ import annotations

import torch

import grad_monitor
from grader.sandbox import probekit
from shared import build, run_step


def _plain(value, depth: int = 0):
    """A report as plain data: dicts with str keys, lists, str, float, int, None; the rest opaque."""
    if depth > 4:
        return probekit.opaque(value)
    if type(value) is dict and all(type(k) is str for k in value):
        return {k: _plain(v, depth + 1) for k, v in value.items()}
    if type(value) in (list, tuple):
        return [_plain(v, depth + 1) for v in value]
    if value is None or type(value) in (str, float, int, bool):
        return value
    return probekit.opaque(value)


def _report(mon):
    report = getattr(mon, "report", None)
    if not callable(report):
        return probekit.opaque(report)
    return _plain(report())


def _hooks(model) -> dict:
    """{"params": {name: hooks on the tensor}, "modules": {name: [backward, backward pre, forward, forward pre]}}."""
    return {"params": {n: probekit.count_entries(p._backward_hooks) for n, p in model.named_parameters()},
            "modules": {n or "<model>": [probekit.count_entries(m._backward_hooks),
                                         probekit.count_entries(m._backward_pre_hooks),
                                         probekit.count_entries(m._forward_hooks),
                                         probekit.count_entries(m._forward_pre_hooks)]
                        for n, m in model.named_modules()}}


def _grads(model) -> dict:
    return {n: None if p.grad is None else p.grad.detach().clone() for n, p in model.named_parameters()}


def monitor(weights, frozen, kwargs, steps, *, after=None, owner=None):
    """Run ``steps`` inside ``with GradMonitor(model, **kwargs) as mon``; report what happened.

    With ``after`` (a step), one more step runs after the block and the report is read
    again. With ``owner`` (a parameter name), the model's owner registered a hook of their
    own on that parameter before the block; the calls it got inside and after are counted.
    """
    model = build(weights, frozen)
    calls = []
    if owner is not None:
        owned = dict(model.named_parameters())[owner]
        owned.register_hook(lambda g: calls.append(1))  # not an instrument: the owner's hook the monitor must keep
    result = {"hooks_before": _hooks(model)}
    mon = grad_monitor.GradMonitor(model, **kwargs)
    with mon as entered:
        result["entered_is_self"] = entered is mon
        result["hooks_inside"] = _hooks(model)
        for step in steps:
            run_step(model, step)
    result["hooks_after"] = _hooks(model)
    result["grads"] = _grads(model)
    result["report"] = _report(mon)
    result["owner_calls_inside"] = len(calls)
    if after is not None:
        run_step(model, after)
        result["report_after"] = _report(mon)
        result["owner_calls_after"] = len(calls)
    return result


def monitor_raising(weights, frozen, steps):
    """Run ``steps`` inside the block, then raise LookupError inside it; what escaped, hooks, report."""
    model = build(weights, frozen)
    before = _hooks(model)
    mon = grad_monitor.GradMonitor(model)
    escaped = None
    try:
        with mon:
            for step in steps:
                run_step(model, step)
            raise LookupError("raised inside the with block")
    except Exception as e:  # noqa: BLE001 (reported as data)
        escaped = probekit.raised(e)
    return {"escaped": escaped, "hooks_before": before, "hooks_after": _hooks(model), "report": _report(mon)}
