"""Variant: None bounds become -inf / +inf; masked_fill forward; backward masks with ~(below | above)."""

from __future__ import annotations

import math

import torch


class Clamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, min, max):
        lo = -math.inf if min is None else float(min)
        hi = math.inf if max is None else float(max)
        ctx.lo, ctx.hi = lo, hi
        ctx.save_for_backward(x)
        return x.masked_fill(x < lo, lo).masked_fill(x > hi, hi)

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        clipped = (x < ctx.lo) | (x > ctx.hi)
        return grad_out.masked_fill(clipped, 0.0), None, None


def clamp(x, min=None, max=None):
    if None not in (min, max) and max < min:
        raise ValueError("max must be >= min, got min=%r and max=%r" % (min, max))
    return Clamp.apply(x, min, max)
