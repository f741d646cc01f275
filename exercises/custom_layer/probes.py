"""Probes for the custom_layer exercise. They run INSIDE the sandbox.

Each probe takes plain data (numbers, strings, CPU tensors), builds the
candidate's module, runs it and returns plain data: dicts of tensors, numbers
and strings. Probes never judge anything; the hidden checks (judge side) compare
what comes back with values they compute themselves.

This exercise forbids nn.Linear, F.linear, F.bilinear, F.silu and nn.SiLU, and the
worker charges a check for any call of them made while a probe runs, whoever
makes it. So the probes never touch them: interoperability with nn.Linear is
tested on the judge side, with state_dict tensors sent in and out.
"""

from __future__ import annotations

import torch
from torch import nn

import custom_layer
from grader.sandbox import probekit
from grader.sandbox.probekit import tensor as _plain


def _params(m) -> list:
    """[name, shape, is an nn.Parameter, requires_grad] for every named parameter."""
    return [
        [name, list(p.shape), isinstance(p, nn.Parameter), bool(p.requires_grad)]
        for name, p in m.named_parameters()
    ]


def _state_dict(m) -> dict:
    """The module's state_dict as {name: tensor}; a non-tensor value opaque."""
    state = m.state_dict()
    return {str(k): _plain(v) for k, v in state.items()}


def _attribute(m, name: str) -> dict:
    """How the module holds ``name``: missing, None, an nn.Parameter or something else."""
    if not hasattr(m, name):
        return {"kind": "missing"}
    value = getattr(m, name)
    if value is None:
        return {"kind": "none"}
    if isinstance(value, nn.Parameter):
        return {"kind": "parameter", "shape": list(value.shape), "value": value.detach().clone()}
    if isinstance(value, torch.Tensor):
        return {"kind": "tensor", "shape": list(value.shape), "value": value.detach().clone()}
    return {"kind": type(value).__name__}


def _grads(out, grad_out, inputs: dict) -> tuple[dict, str | None]:
    """Gradients of sum(out * grad_out) w.r.t. each input that requires grad; None for the others."""
    return probekit.backward_grads([(out, grad_out)], inputs)


# ------------------------------------------------------------------- CustomLinear


def linear_build(in_features, out_features, bias=None, *, seed=0, x=None):
    """Construct CustomLinear(in_features, out_features, bias=bias) and describe it.

    ``bias=None`` leaves the argument out, so the layer gets the candidate's own
    default (the contract's is ``bias=True``: a default of False shows). With ``x``
    given, the result also holds ``out = layer(x)`` (the judge loads the returned
    state_dict into its own nn.Linear and compares).
    """
    kwargs = {} if bias is None else {"bias": bias}
    m = probekit.seeded(custom_layer.CustomLinear, in_features, out_features, seed=seed, **kwargs)
    report = {
        "is_module": isinstance(m, nn.Module),
        "params": _params(m),
        "state_dict": _state_dict(m),
        "weight": _attribute(m, "weight"),
        "bias": _attribute(m, "bias"),
    }
    repr_fn = getattr(m, "extra_repr", None)
    extra = repr_fn() if callable(repr_fn) else None
    report["extra_repr"] = extra if isinstance(extra, str) else probekit.opaque(extra)
    if x is not None:
        with torch.no_grad():
            report["out"] = _plain(m(x))
    return report


def linear_init(layers, *, seed=0):
    """Build CustomLinear(in, out, bias) for every [in, out, bias] in ``layers``; return their initial weights.

    Returns {"weights": [...], "biases": [...]}: the layers' weight and bias
    tensors (None for a missing bias), in the order given.
    """
    torch.manual_seed(seed)
    weights, biases = [], []
    for in_features, out_features, bias in layers:
        m = custom_layer.CustomLinear(in_features, out_features, bias=bias)
        weights.append(_plain(getattr(m, "weight", None)))
        biases.append(_plain(getattr(m, "bias", None)))
    return {"weights": weights, "biases": biases}


def linear_forward(in_features, out_features, weight, bias, x, *, grad_out=None):
    """Build CustomLinear with the given weight (and bias, or bias=False when None); return layer(x).

    The layer is converted to x's dtype first (``layer.to(x.dtype)``), as a user
    with float64 data would. The weights are copied into ``layer.weight`` and
    ``layer.bias``. With ``grad_out`` given, the result also holds the gradients
    of sum(out * grad_out) w.r.t. x, weight and bias.
    """
    m = probekit.seeded(custom_layer.CustomLinear, in_features, out_features, bias=bias is not None).to(x.dtype)
    with torch.no_grad():
        m.weight.copy_(weight)
        if bias is not None:
            m.bias.copy_(bias)
    backward = grad_out is not None
    if backward:
        x.requires_grad_(True)
    out = m(x)
    report = {"out": _plain(out)}
    if backward:
        inputs = {"x": x, "weight": m.weight}
        if bias is not None:
            inputs["bias"] = m.bias
        grads, why = _grads(out, grad_out, inputs)
        report.update(grads=grads, no_grad_reason=why)
    return report


def linear_load(in_features, out_features, bias, state_dict, x):
    """CustomLinear(...).load_state_dict(state_dict, strict=True), then layer(x) and the state_dict after."""
    m = probekit.seeded(custom_layer.CustomLinear, in_features, out_features, bias=bias)
    m.load_state_dict(state_dict, strict=True)
    with torch.no_grad():
        out = m(x)
    return {"out": _plain(out), "state_dict": _state_dict(m)}


# -------------------------------------------------------------------------- Swish


def swish(x, *, args=None, grad_out=None, load=None):
    """Swish(*args) (default arguments when ``args`` is None) applied to x.

    ``load``: a state_dict loaded with strict=True before the forward pass. With
    ``grad_out`` given, the result also holds the gradients of sum(out * grad_out)
    w.r.t. x and, when the module has one, its ``beta`` parameter.
    """
    m = probekit.seeded(custom_layer.Swish, *(args or ()))
    report = {
        "is_module": isinstance(m, nn.Module),
        "params": _params(m),
        "state_dict": _state_dict(m),
        "beta": _attribute(m, "beta"),
    }
    if load is not None:
        m.load_state_dict(load, strict=True)
    backward = grad_out is not None
    if backward:
        x.requires_grad_(True)
    out = m(x)
    report["out"] = _plain(out)
    if backward:
        inputs = {"x": x}
        beta = getattr(m, "beta", None)
        if isinstance(beta, torch.Tensor):
            inputs["beta"] = beta
        grads, why = _grads(out, grad_out, inputs)
        report.update(grads=grads, no_grad_reason=why)
    return report
