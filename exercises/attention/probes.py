"""Probes for the attention exercise. They run INSIDE the sandbox.

Each probe takes plain data (numbers, strings, CPU tensors), runs the candidate's
code and returns plain data: a dict of tensors, numbers and strings. Probes never
judge anything; the hidden checks (judge side) compare what comes back with
values they compute themselves.

Forbidden APIs (SDPA and its kernels, nn.MultiheadAttention) are absent from the
sandbox however they are reached (grader.sandbox.removal): using one raises.
"""

from __future__ import annotations

import torch

import attention
from grader.sandbox import probekit
from grader.sandbox.probekit import tensor as _plain

PROJECTIONS = ("W_q", "W_k", "W_v", "W_o")


def _pair(result):
    """(out, weights) from what the candidate returned, or None if it is not a pair."""
    if isinstance(result, (tuple, list)) and len(result) == 2:
        return result[0], result[1]
    return None


def _grads(out, weights, grad_out, grad_weights, inputs: dict) -> tuple[dict, str | None]:
    """Gradients of sum(out*grad_out) + sum(weights*grad_weights) w.r.t. each of ``inputs``."""
    return probekit.backward_grads([(out, grad_out), (weights, grad_weights)], inputs)


def sdpa(q, k, v, mask=None, *, grad_out=None, grad_weights=None):
    """Call scaled_dot_product_attention(q, k, v[, mask]).

    With grad_out and grad_weights given, q, k and v require grad and the result
    also holds grad_q, grad_k, grad_v of sum(out*grad_out) + sum(weights*grad_weights).
    """
    torch.manual_seed(0)
    backward = grad_out is not None
    if backward:
        for t in (q, k, v):
            t.requires_grad_(True)
    args = (q, k, v) if mask is None else (q, k, v, mask)
    result = attention.scaled_dot_product_attention(*args)
    pair = _pair(result)
    if pair is None:
        return probekit.returned_instead(result)
    out, weights = pair
    report = {"out": _plain(out), "weights": _plain(weights)}
    if backward:
        grads, why = _grads(out, weights, grad_out, grad_weights, {"grad_q": q, "grad_k": k, "grad_v": v})
        report.update(grads, no_grad_reason=why)
    return report


def _module_report(m) -> dict:
    """What the judge needs to check the module's structure."""
    projections = {}
    for name in PROJECTIONS:
        sub = getattr(m, name, None)
        info = {"type": type(sub).__name__, "is_linear": isinstance(sub, torch.nn.Linear)}
        if isinstance(sub, torch.nn.Linear):
            info.update(
                in_features=sub.in_features,
                out_features=sub.out_features,
                has_bias=sub.bias is not None,
            )
        projections[name] = info
    return {
        "is_module": isinstance(m, torch.nn.Module),
        "params": [[name, list(p.shape)] for name, p in m.named_parameters()],
        "projections": projections,
    }


def mha_build(d_model, n_heads, bias=None):
    """Construct MultiHeadAttention(d_model, n_heads, bias=bias) and describe it; with no ``bias``, the call
    leaves it out, so the constructor's own default is what is described (the prompt's is True)."""
    given = {} if bias is None else {"bias": bias}
    return _module_report(probekit.seeded(attention.MultiHeadAttention, d_model, n_heads, **given))


def mha_forward(
    d_model,
    n_heads,
    params,
    query,
    key,
    value,
    mask=None,
    *,
    bias=True,
    grad_out=None,
    grad_weights=None,
):
    """Build MultiHeadAttention with the given projection weights and run forward.

    params maps "W_q.weight", "W_q.bias", ... to tensors copied into the module.
    With grad_out and grad_weights given, the result also holds the gradients of
    sum(out*grad_out) + sum(weights*grad_weights) w.r.t. query, key, value
    (grad_query, ...) and the projections' parameters (param_grads).
    """
    m = probekit.seeded(attention.MultiHeadAttention, d_model, n_heads, bias=bias)
    with torch.no_grad():
        for full_name, tensor in params.items():
            sub_name, attr = full_name.split(".")
            getattr(getattr(m, sub_name), attr).copy_(tensor)
    backward = grad_out is not None
    if backward:
        for t in (query, key, value):
            t.requires_grad_(True)
    args = (query, key, value) if mask is None else (query, key, value, mask)
    result = m(*args)
    pair = _pair(result)
    if pair is None:
        return probekit.returned_instead(result)
    out, weights = pair
    report = {"out": _plain(out), "weights": _plain(weights)}
    if backward:
        inputs = {"grad_query": query, "grad_key": key, "grad_value": value}
        inputs.update({n: getattr(getattr(m, n.split(".")[0]), n.split(".")[1]) for n in params})
        grads, why = _grads(out, weights, grad_out, grad_weights, inputs)
        report.update({k: grads[k] for k in ("grad_query", "grad_key", "grad_value")},
                      param_grads={n: grads[n] for n in params}, no_grad_reason=why)
    return report
