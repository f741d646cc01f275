"""Mutant: the forward clamps x in place (masked_fill_) and returns a copy: values and gradients are right, but the caller's x is changed."""

from __future__ import annotations

import torch


def _inside(x: torch.Tensor, lower: float | None, upper: float | None) -> torch.Tensor:
    """True where x is within the bounds, the bounds themselves included."""
    keep = torch.ones_like(x, dtype=torch.bool)
    if lower is not None:
        keep &= x >= lower
    if upper is not None:
        keep &= x <= upper
    return keep


class Clamp(torch.autograd.Function):
    """y = x limited to [min, max]; dy/dx = 1 where min <= x <= max, else 0."""

    @staticmethod
    def forward(ctx, x, min, max):
        ctx.save_for_backward(_inside(x, min, max))  # the mask, taken before x changes
        if min is not None:
            x.masked_fill_(x < min, min)
        if max is not None:
            x.masked_fill_(x > max, max)
        return x.clone()

    @staticmethod
    def backward(ctx, grad_out):
        (keep,) = ctx.saved_tensors
        return torch.where(keep, grad_out, torch.zeros_like(grad_out)), None, None


def clamp(x: torch.Tensor, min: float | None = None, max: float | None = None) -> torch.Tensor:
    """Clamp x to [min, max] (None: unbounded on that side) through Clamp."""
    if min is not None and max is not None and min > max:
        raise ValueError(f"min ({min}) must not be greater than max ({max})")
    return Clamp.apply(x, min, max)
