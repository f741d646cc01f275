"""Gradient clipping by the global norm: implement clip_grad_norm below. See README.md for the full contract."""

from __future__ import annotations

from collections.abc import Iterable

import torch


def clip_grad_norm(parameters: torch.Tensor | Iterable[torch.Tensor], max_norm: float,
                   norm_type: float = 2.0, eps: float = 1e-6) -> torch.Tensor:
    """Clip the gradients of `parameters` by their joint norm, in place; return the norm before clipping.

    parameters: one tensor or an iterable of tensors (a generator too: iterate it once);
        a parameter whose .grad is None is skipped.
    The total norm is the norm_type-norm of all the gradients together (p >= 1: the p-th
    root of the sum of |g|**p over every element; inf: the largest |g|), returned as a
    0-d tensor of the gradients' dtype; torch.tensor(0.0) when there is no gradient.
    If max_norm / (total + eps) < 1, every gradient is multiplied in place by that
    factor; otherwise the gradients are left untouched.
    Raise ValueError naming max_norm if max_norm < 0, and naming norm_type if
    norm_type is not a number >= 1 or inf.
    """
    raise NotImplementedError("clip_grad_norm")
