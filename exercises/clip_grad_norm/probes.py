"""Probes for the clip_grad_norm exercise. They run INSIDE the sandbox.

A probe builds parameters from plain data (gradients as CPU tensors, None for a
parameter without one), calls the candidate's clip_grad_norm and returns plain data:
the returned total, every .grad afterwards, and whether each .grad is still the same
tensor object. Probes never judge anything; the hidden checks compare with
torch.nn.utils.clip_grad_norm_ judge-side (the probes never call it: it is forbidden
here, and the worker charges any call of it while a probe runs).
"""

from __future__ import annotations

import torch

import clip_grad
from grader.sandbox import probekit

_UNSET = object()


def _parameters(grads: list) -> list:
    params = []
    for g in grads:
        like = torch.zeros(1) if g is None else g
        p = torch.zeros_like(like).requires_grad_(True)
        p.grad = None if g is None else g.clone()
        params.append(p)
    return params


def clip(grads, max_norm, norm_type=_UNSET, eps=_UNSET, *, pass_as="list"):
    """clip_grad_norm(params, max_norm[, norm_type][, eps]), params passed as a list, a
    tuple, a generator or (pass_as="tensor", one gradient) a single tensor.

    Returns {"total": the returned value (a tensor, else opaque), "grads": [tensor or None], "same_object": [bool or None]}.
    """
    params = _parameters(grads)
    before = [p.grad for p in params]
    kwargs = {}
    if norm_type is not _UNSET:
        kwargs["norm_type"] = norm_type
    if eps is not _UNSET:
        kwargs["eps"] = eps
    argument = {"list": lambda: params, "tuple": lambda: tuple(params), "generator": lambda: (p for p in params),
                "tensor": lambda: params[0]}[pass_as]()
    returned = clip_grad.clip_grad_norm(argument, max_norm, **kwargs)
    return {
        "total": probekit.tensor(returned),
        "grads": [None if p.grad is None else p.grad.detach().clone() for p in params],
        "same_object": [None if b is None else p.grad is b for p, b in zip(params, before)],
    }
