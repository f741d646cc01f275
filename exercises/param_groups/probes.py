"""Probes for the param_groups exercise. They run INSIDE the sandbox.

Every probe builds shared.Net (its parameter names are listed in shared.py), calls
the candidate's freeze or param_groups and returns plain data: which parameters are
frozen, and each group described by its keys, the NAMES of its parameters (found by
identity among the model's parameters) and its lr and weight_decay. The optimizer
probes then build torch.optim.SGD or AdamW from the groups exactly as returned,
give every parameter a gradient and take one step. Probes never judge.
"""

from __future__ import annotations

import torch

import param_groups
import shared
from grader.sandbox import probekit


def _requires_grad(model) -> dict:
    return {name: bool(p.requires_grad) for name, p in model.named_parameters()}


def _freeze_directly(model, frozen) -> None:
    """The probe's own freezing (by exact names), so param_groups is tested on its own."""
    params = dict(model.named_parameters())
    for name in frozen:
        params[name].requires_grad_(False)


def _number(v):
    if type(v) in (int, float):
        return v
    if isinstance(v, torch.Tensor):
        return probekit.tensor(v)
    return probekit.opaque(v)


def _describe_groups(model, groups):
    """The groups as plain data, or the kit's returned_instead when they are not a list of dicts."""
    if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
        return probekit.returned_instead(groups)
    by_id = {id(p): name for name, p in model.named_parameters()}
    out = []
    for g in groups[:200]:
        params = g.get("params")
        entry = {"keys": sorted(k if isinstance(k, str) else repr(k)[:60] for k in list(g)[:20]),
                 "params_type": type(params).__name__}
        if isinstance(params, (list, tuple)):
            entry["params"] = [by_id.get(id(p), f"<not a parameter of the model: {type(p).__name__}>")
                               for p in params[:500]]
        for key in ("lr", "weight_decay"):
            if key in g:
                entry[key] = _number(g[key])
        out.append(entry)
    return {"groups": out}


def pg_freeze(prefixes, *, as_tuple=False, frozen_before=()):
    """freeze(model, prefixes) on a model whose ``frozen_before`` parameters the probe froze first;
    requires_grad of every parameter afterwards, and what freeze returned.

    What freeze raises comes back as data ("raised"), with requires_grad after it, so that a
    check can see whether anything was frozen before the error.
    """
    model = shared.build()
    _freeze_directly(model, frozen_before)
    try:
        out = param_groups.freeze(model, tuple(prefixes) if as_tuple else list(prefixes))
    except Exception as e:
        return {"raised": probekit.raised(e), "requires_grad": _requires_grad(model)}
    return {"raised": None, "returned": None if out is None else probekit.describe(out),
            "requires_grad": _requires_grad(model)}


def pg_groups(lr_by_prefix, weight_decay, default_lr, frozen=()):
    """param_groups(model, lr_by_prefix, weight_decay, default_lr=default_lr) after the probe froze ``frozen``.

    Returns {"result": the groups described (see _describe_groups)}.
    """
    model = shared.build()
    _freeze_directly(model, frozen)
    groups = param_groups.param_groups(model, dict(lr_by_prefix), weight_decay, default_lr=default_lr)
    return {"result": _describe_groups(model, groups)}


def pg_step(optimizer, values, grads, lr_by_prefix, weight_decay, default_lr, frozen=()):
    """Build the model from ``values``, freeze ``frozen``, make the groups, build
    torch.optim.SGD(groups, lr=0.0) or AdamW(groups, lr=0.0) from them as returned, give every
    parameter (frozen ones too) its gradient from ``grads`` and take one step.

    Returns {"result": groups described, "after": every parameter after the step} or, when
    the optimizer refused the groups, {"result": ..., "refused": the exception caught}.
    """
    model = shared.build(values)
    _freeze_directly(model, frozen)
    groups = param_groups.param_groups(model, dict(lr_by_prefix), weight_decay, default_lr=default_lr)
    answer = {"result": _describe_groups(model, groups)}
    if "returned" in answer["result"]:
        return answer
    try:
        if optimizer == "sgd":
            opt = torch.optim.SGD(groups, lr=0.0)
        else:
            opt = torch.optim.AdamW(groups, lr=0.0)
    except Exception as e:
        answer["refused"] = probekit.raised(e)
        return answer
    for name, p in model.named_parameters():
        p.grad = grads[name].clone()
    opt.step()
    answer["after"] = probekit.parameters(model)
    return answer
