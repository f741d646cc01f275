"""Gradient checkpointing without torch.utils.checkpoint: the reference solution.

Each segment is one call of a custom autograd Function. Its forward runs the blocks under
no_grad and keeps only the segment's input (and the CPU RNG state); its backward replays
the RNG state, recomputes the segment with grad enabled and differentiates it.

The segment's trainable parameters are inputs of the Function too: that is what makes the
output require grad, and the parameters receive their gradients, when x itself does not
require grad.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


def _segments(n: int, segments: int) -> list[range]:
    """Contiguous index ranges, sizes as equal as possible, the larger ones first."""
    size, extra = divmod(n, segments)
    ranges, start = [], 0
    for i in range(segments):
        stop = start + size + (1 if i < extra else 0)
        ranges.append(range(start, stop))
        start = stop
    return ranges


def _trainable(blocks: Sequence[nn.Module]) -> list[torch.Tensor]:
    return [p for block in blocks for p in block.parameters() if p.requires_grad]


class _Segment(torch.autograd.Function):
    """apply(blocks, x, *params) -> blocks applied to x in order, recomputed in backward."""

    @staticmethod
    def forward(ctx, blocks, x, *params):
        ctx.blocks = blocks
        ctx.rng_state = torch.get_rng_state()
        ctx.save_for_backward(x)
        with torch.no_grad():
            for block in blocks:
                x = block(x)
        return x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        x = x.detach().requires_grad_(ctx.needs_input_grad[1])
        params = _trainable(ctx.blocks)
        with torch.random.fork_rng(devices=[]):  # the caller's RNG state is put back afterwards
            torch.set_rng_state(ctx.rng_state)  # the same dropout masks as in the forward
            with torch.enable_grad():
                out = x
                for block in ctx.blocks:
                    out = block(out)
        wanted = ([x] if x.requires_grad else []) + params
        grads = list(torch.autograd.grad(out, wanted, grad_out, allow_unused=True))
        grad_x = grads.pop(0) if x.requires_grad else None
        return (None, grad_x, *grads)


def checkpointed_forward(blocks: Sequence[nn.Module], x: torch.Tensor, segments: int) -> torch.Tensor:
    """Apply ``blocks`` to ``x`` in order, keeping only each segment's input for backward."""
    blocks = list(blocks)
    if not 1 <= segments <= len(blocks):
        raise ValueError(f"segments must be between 1 and len(blocks) = {len(blocks)}, got segments={segments}")
    for part in _segments(len(blocks), segments):
        chunk = [blocks[i] for i in part]
        x = _Segment.apply(chunk, x, *_trainable(chunk))
    return x
