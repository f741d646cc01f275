"""Variant: setup_context style; saves the boolean mask (not x) with save_for_backward.

Forward with torch.maximum / torch.minimum against full tensors of the bound. Since the
mask is computed in forward, modifying x in place afterwards cannot change the gradient.
"""

from __future__ import annotations

import torch


class Clamp(torch.autograd.Function):
    @staticmethod
    def forward(x, min, max):
        out = x.clone()
        if min is not None:
            out = torch.maximum(out, torch.full_like(x, min))
        if max is not None:
            out = torch.minimum(out, torch.full_like(x, max))
        return out

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, lower, upper = inputs
        mask = torch.ones_like(x, dtype=torch.bool)
        if lower is not None:
            mask = mask & (x >= lower)
        if upper is not None:
            mask = mask & (x <= upper)
        ctx.save_for_backward(mask)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_out):
        (mask,) = ctx.saved_tensors
        return grad_out * mask.to(grad_out.dtype), None, None


def clamp(x, min=None, max=None):
    if min is not None and max is not None and min > max:
        raise ValueError(f"clamp: max={max} is smaller than min={min}")
    return Clamp.apply(x, min, max)
