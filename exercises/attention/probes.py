"""Probes for the attention exercise. They run INSIDE the sandbox.

Each probe takes plain data (numbers, strings, CPU tensors), runs the candidate's
code and returns plain data: a dict of tensors, numbers and strings. Probes never
judge anything; the hidden checks (judge side) compare what comes back with
values they compute themselves.

Forbidden APIs are watched by the grader's worker during every call, however
they are reached (torch.ops.aten included). The module probes also report,
under "forbidden", an nn.MultiheadAttention found inside the candidate's module:
structure the worker cannot see from calls alone.
"""

from __future__ import annotations

import torch

import attention

PROJECTIONS = ("W_q", "W_k", "W_v", "W_o")

def _describe(value) -> str:
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of length {len(value)}"
    return f"a {type(value).__name__}"


def _plain(value):
    """What goes back to the judge: tensors detached, anything else as it is."""
    if isinstance(value, torch.Tensor):
        return value.detach()
    return value


def _pair(result):
    """(out, weights) from what the candidate returned, or None if it is not a pair."""
    if isinstance(result, (tuple, list)) and len(result) == 2:
        return result[0], result[1]
    return None


def _grads(out, weights, grad_out, grad_weights, inputs):
    """Gradients of sum(out*grad_out) + sum(weights*grad_weights) w.r.t. inputs.

    Returns (grads or None for each input, reason or None). Nothing is
    differentiated when the outputs are not tensors of the expected shapes: the
    judge reports the shape problem itself.
    """
    if not (
        isinstance(out, torch.Tensor)
        and isinstance(weights, torch.Tensor)
        and out.shape == grad_out.shape
        and weights.shape == grad_weights.shape
    ):
        return [None] * len(inputs), "outputs are not tensors of the expected shapes"
    loss = (out * grad_out.to(out.dtype)).sum() + (weights * grad_weights.to(weights.dtype)).sum()
    if not loss.requires_grad:
        return [None] * len(inputs), "the outputs are not connected to the autograd graph"
    wanted = [t for t in inputs if t.requires_grad]
    found = iter(torch.autograd.grad(loss, wanted, allow_unused=True) if wanted else ())
    return [_plain(next(found)) if t.requires_grad else None for t in inputs], None


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
        return {"returned": _describe(result)}
    out, weights = pair
    report = {"out": _plain(out), "weights": _plain(weights)}
    if backward:
        grads, why = _grads(out, weights, grad_out, grad_weights, (q, k, v))
        report.update(grad_q=grads[0], grad_k=grads[1], grad_v=grads[2], no_grad_reason=why)
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
    uses_torch_mha = any(isinstance(sub, torch.nn.MultiheadAttention) for sub in m.modules())
    return {
        "is_module": isinstance(m, torch.nn.Module),
        "params": [[name, list(p.shape)] for name, p in m.named_parameters()],
        "projections": projections,
        "forbidden": ["torch.nn.MultiheadAttention"] if uses_torch_mha else [],
    }


def mha_build(d_model, n_heads, bias=True):
    """Construct MultiHeadAttention(d_model, n_heads, bias=bias) and describe it."""
    torch.manual_seed(0)
    m = attention.MultiHeadAttention(d_model, n_heads, bias=bias)
    return _module_report(m)


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
    torch.manual_seed(0)
    m = attention.MultiHeadAttention(d_model, n_heads, bias=bias)
    forbidden = _module_report(m)["forbidden"]
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
        return {"returned": _describe(result), "forbidden": forbidden}
    out, weights = pair
    report = {"out": _plain(out), "weights": _plain(weights), "forbidden": forbidden}
    if backward:
        names = list(params)
        tensors = [getattr(getattr(m, n.split(".")[0]), n.split(".")[1]) for n in names]
        grads, why = _grads(out, weights, grad_out, grad_weights, (query, key, value, *tensors))
        report.update(
            grad_query=grads[0],
            grad_key=grads[1],
            grad_value=grads[2],
            param_grads=dict(zip(names, grads[3:])),
            no_grad_reason=why,
        )
    return report
