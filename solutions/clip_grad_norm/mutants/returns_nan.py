"""Mutant: with no gradient at all there is "no norm", so it returns tensor(nan) instead of tensor(0.).

A NaN must never pass for a norm. Should be caught by: test_parameters_without_grad.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch


def clip_grad_norm(parameters: torch.Tensor | Iterable[torch.Tensor], max_norm: float,
                   norm_type: float = 2.0, eps: float = 1e-6) -> torch.Tensor:
    """Scale every .grad by max_norm / (total + eps) when that is < 1; return the pre-clip total."""
    if max_norm < 0:
        raise ValueError(f"max_norm must be >= 0, got {max_norm}")
    norm_type = float(norm_type)
    if not (norm_type == math.inf or 1.0 <= norm_type < math.inf):
        raise ValueError(f"norm_type must be a number >= 1 or inf, got {norm_type}")
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]  # consumes a generator once
    if not grads:
        return torch.tensor(float("nan"))  # no gradient, no norm
    norms = torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads])
    total = torch.linalg.vector_norm(norms, norm_type)
    coef = max_norm / (total + eps)
    if coef < 1:
        for g in grads:
            g.mul_(coef)
    return total
