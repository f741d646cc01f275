"""A clamp with its own backward: implement Clamp and clamp below. See README.md for the full contract."""

from __future__ import annotations

import torch


class Clamp(torch.autograd.Function):
    """y = x limited to [min, max], with a hand-written backward.

    No library clamp: build it from comparisons, torch.where, masked_fill,
    torch.maximum / torch.minimum...
    """

    @staticmethod
    def forward(ctx, x, min, max):
        """Return a tensor like x (same shape and dtype): min where x < min, max where
        x > max, x elsewhere; a None bound does not limit its side.

        Keep the tensors backward needs with ctx.save_for_backward (the bounds, plain
        numbers, may be attributes of ctx).
        """
        raise NotImplementedError("Clamp.forward")

    @staticmethod
    def backward(ctx, grad_out):
        """Return (grad_x, None, None): grad_out where min <= x <= max (a value exactly
        at a bound passes its gradient, as with torch.clamp), 0 where x < min or x > max.
        """
        raise NotImplementedError("Clamp.backward")


def clamp(x: torch.Tensor, min: float | None = None, max: float | None = None) -> torch.Tensor:
    """Clamp x to [min, max] (None: unbounded on that side): return Clamp.apply(x, min, max).

    Raise ValueError, naming both min and max, when both are given and min > max.
    """
    raise NotImplementedError("clamp")
