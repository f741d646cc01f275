"""Variant: one Function class per segment, built by a factory, the segment's blocks in its closure.

What differs from the reference: the segment bounds are computed as i * size + min(i, extra);
each segment gets its own Function subclass holding its blocks (nothing but tensors on ctx);
the parameters are inputs (as in the reference) but backward differentiates with
torch.autograd.backward(out, grad_out, inputs=...) into fresh leaves' .grad and returns those;
the RNG state is saved with torch.random.get_rng_state / restored under fork_rng.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


def _segment_function(chunk: list[nn.Module]):
    params = [p for block in chunk for p in block.parameters() if p.requires_grad]

    def run(h):
        for block in chunk:
            h = block(h)
        return h

    class Segment(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, *tensors):
            ctx.state = torch.random.get_rng_state()
            ctx.save_for_backward(x)
            with torch.no_grad():
                return run(x)

        @staticmethod
        def backward(ctx, grad_out):
            x = ctx.saved_tensors[0].detach()
            x.requires_grad_(ctx.needs_input_grad[0])
            with torch.random.fork_rng(devices=[]), torch.enable_grad():
                torch.random.set_rng_state(ctx.state)
                out = run(x)
            leaves = ([x] if x.requires_grad else []) + params
            saved = [p.grad for p in params]
            for p in params:
                p.grad = None
            torch.autograd.backward(out, grad_out, inputs=leaves)
            grads = [p.grad for p in params]
            for p, g in zip(params, saved):
                p.grad = g
            return (x.grad if x.requires_grad else None, *grads)

    return lambda x: Segment.apply(x, *params)


def checkpointed_forward(blocks: Sequence[nn.Module], x: torch.Tensor, segments: int) -> torch.Tensor:
    n = len(blocks)
    if not isinstance(segments, int) or not 0 < segments <= n:
        raise ValueError(f"segments={segments!r}: expected an int between 1 and {n}")
    size, extra = divmod(n, segments)
    bounds = [i * size + min(i, extra) for i in range(segments + 1)]
    for lo, hi in zip(bounds, bounds[1:]):
        x = _segment_function([blocks[i] for i in range(lo, hi)])(x)
    return x
