"""Variant: torch._foreach_norm / _foreach_mul_ like torch itself, a Python float coefficient,
and the generator walked once by a helper generator."""

from __future__ import annotations

import torch


def _grads(parameters):
    if isinstance(parameters, torch.Tensor):
        parameters = (parameters,)
    for p in parameters:
        if p.grad is not None:
            yield p.grad


def clip_grad_norm(parameters, max_norm, norm_type=2.0, eps=1e-6):
    if not max_norm >= 0:
        raise ValueError(f"clip_grad_norm: max_norm={max_norm} must be non-negative")
    if not (norm_type >= 1):  # False for NaN too; inf passes
        raise ValueError(f"clip_grad_norm: norm_type={norm_type} is not supported (>= 1 or inf)")
    grads = list(_grads(parameters))
    if not grads:
        return torch.tensor(0.0)
    per_param = torch._foreach_norm(grads, float(norm_type))
    total = torch.linalg.vector_norm(torch.stack(per_param), float(norm_type))
    coef = max_norm / (total.item() + eps)
    if coef < 1.0:
        torch._foreach_mul_(grads, coef)
    return total
