"""Probes for the autograd_function exercise. They run INSIDE the sandbox.

Each probe takes plain data (numbers, None, CPU tensors built judge-side), drives the
candidate's Clamp / clamp and returns plain data. Probes never judge anything; the
hidden checks compare what comes back with torch.clamp's values and gradients,
computed judge-side.

torch.clamp, torch.clip and F.hardtanh are forbidden, and the worker charges a check
for any call of them while a probe runs, whoever makes it: the probes never use them.
"""

from __future__ import annotations

import torch

import clamp_function
from grader.sandbox import probekit


def _plain(value):
    return value.detach() if isinstance(value, torch.Tensor) else value


def _apply(x, lower, upper, via: str):
    if via == "apply":
        return clamp_function.Clamp.apply(x, lower, upper)
    return clamp_function.clamp(x, lower, upper)


def run(x, grad_out, lower=None, upper=None, *, via="clamp", requires_grad=True):
    """out = clamp(x, lower, upper) (or Clamp.apply); with requires_grad, out.backward(grad_out).

    Returns {"out", "out_requires_grad", "grad"}: grad is x.grad (None without one).
    """
    x = x.clone().requires_grad_(requires_grad)
    out = _apply(x, lower, upper, via)
    result = {"out": _plain(out), "out_requires_grad": bool(getattr(out, "requires_grad", False)),
              "grad": None}
    if requires_grad:
        out.backward(grad_out)
        result["grad"] = _plain(x.grad)
    return result


def backward_returns(x, grad_out, lower=None, upper=None):
    """Clamp.backward(ctx, grad_out) called directly, ctx being the node autograd built.

    Returns {"kind": type name, "length": n or None, "is_none": [...], "first": tensor or None}.
    """
    out = clamp_function.Clamp.apply(x.clone().requires_grad_(True), lower, upper)
    returned = clamp_function.Clamp.backward(out.grad_fn, grad_out)
    if isinstance(returned, (tuple, list)):
        return {"kind": type(returned).__name__, "length": len(returned),
                "is_none": [item is None for item in returned],
                "first": _plain(returned[0]) if returned and isinstance(returned[0], torch.Tensor) else None}
    return {"kind": type(returned).__name__, "length": None, "is_none": [returned is None],
            "first": _plain(returned) if isinstance(returned, torch.Tensor) else None}


def gradcheck(x, lower=None, upper=None):
    """torch.autograd.gradcheck of Clamp.apply(., lower, upper) at x (float64); {"passed", "error"}."""
    x = x.clone().requires_grad_(True)
    try:
        passed = torch.autograd.gradcheck(lambda t: clamp_function.Clamp.apply(t, lower, upper), (x,),
                                          eps=1e-6, atol=1e-5, rtol=1e-3)
    except Exception as e:  # gradcheck's own verdict comes back as text, to show on the scorecard
        return {"passed": False, "error": f"{type(e).__name__}: {str(e)[:400]}"}
    return {"passed": bool(passed), "error": None}


def graph(x, lower=None, upper=None):
    """How clamp(x, ...) connects to autograd, with and without requires_grad on x."""
    plain = clamp_function.clamp(x.clone(), lower, upper)
    tracked = clamp_function.clamp(x.clone().requires_grad_(True), lower, upper)
    node = getattr(tracked, "grad_fn", None)
    return {
        "plain_requires_grad": bool(getattr(plain, "requires_grad", False)),
        "plain_grad_fn": None if getattr(plain, "grad_fn", None) is None else type(plain.grad_fn).__name__,
        "grad_fn": None if node is None else type(node).__name__,
        "through_clamp": getattr(node, "_forward_cls", None) is clamp_function.Clamp,
    }


def inplace_after_forward(x, new_values, grad_out, lower=None, upper=None):
    """y = leaf * 1; out = clamp(y, ...); y.copy_(new_values) in place; out.backward(grad_out).

    Returns {"raised": {"type", "qualnames", "message"}} if the backward raised, else
    {"grad": the leaf's gradient}.
    """
    leaf = x.clone().requires_grad_(True)
    y = leaf * 1
    out = clamp_function.clamp(y, lower, upper)
    with torch.no_grad():
        y.copy_(new_values)
    try:
        out.backward(grad_out)
    except Exception as e:
        return {"raised": probekit.raised(e)}
    return {"grad": _plain(leaf.grad)}


def input_after_call(x, grad_out, lower=None, upper=None, *, requires_grad=True):
    """clamp(x, ...) (and, with requires_grad, its backward); the caller's x as it is afterwards.

    Returns {"x_after": x's values after the call}.
    """
    x = x.clone().requires_grad_(requires_grad)
    out = clamp_function.clamp(x, lower, upper)
    if requires_grad and isinstance(out, torch.Tensor) and out.requires_grad:
        out.backward(grad_out)
    return {"x_after": _plain(x)}
