"""Variant (written from the README alone): the total norm from power sums, sum over parameters of
sum(|g| ** p), raised to 1/p at the end (the infinity norm as the largest amax), accumulated with
functools.reduce; clipping writes the scaled values back with copy_, keeping each .grad object."""

from __future__ import annotations

import functools
import math

import torch


def _check(max_norm, norm_type):
    if max_norm < 0:
        raise ValueError(f"max_norm must not be negative (max_norm={max_norm})")
    if not (norm_type == math.inf or (norm_type >= 1 and norm_type != math.inf)):  # NaN fails both tests
        raise ValueError(f"norm_type must be >= 1 or inf (norm_type={norm_type})")


def clip_grad_norm(parameters, max_norm, norm_type=2.0, eps=1e-6):
    _check(max_norm, norm_type)
    params = [parameters] if torch.is_tensor(parameters) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    if len(grads) == 0:
        return torch.tensor(0.0)
    if norm_type == math.inf:
        total = functools.reduce(torch.maximum, [g.abs().amax() for g in grads])
    else:
        power_sum = functools.reduce(torch.add, [g.abs().pow(norm_type).sum() for g in grads])
        total = power_sum.pow(1.0 / norm_type)
    coef = max_norm / (total + eps)
    if coef < 1:
        for g in grads:
            g.copy_(g * coef)
    return total
