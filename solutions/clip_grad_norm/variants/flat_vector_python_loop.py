"""Variant: one flat vector of all gradient elements, norm by hand in float math of the grads'
dtype; clips with `total > max_norm`; iterates the parameters once into a list."""

import math

import torch


def clip_grad_norm(parameters, max_norm, norm_type=2.0, eps=1e-6):
    if max_norm < 0:
        raise ValueError("max_norm cannot be negative: %r" % (max_norm,))
    p = float(norm_type)
    if math.isnan(p) or p < 1:
        raise ValueError("unsupported norm_type %r (need a number >= 1, or inf)" % (norm_type,))
    params = [parameters] if torch.is_tensor(parameters) else list(parameters)
    grads = [q.grad for q in params if q.grad is not None]
    if len(grads) == 0:
        return torch.tensor(0.0)
    flat = torch.cat([g.reshape(-1) for g in grads]).abs()
    if math.isinf(p):
        total = flat.max()
    else:
        total = flat.pow(p).sum().pow(1.0 / p)
    if total > max_norm:
        factor = max_norm / (total + eps)
        for g in grads:
            g.mul_(factor)
    return total
