"""Variant (written from the README alone): the segment bounds from torch.tensor_split of the block indices,
a Function in the setup_context style whose backward saves and puts back the caller's RNG state by hand (no
fork_rng) and gets the gradients with torch.autograd.grad over the saved input and the segment's parameters."""

from __future__ import annotations

import torch


class _Recompute(torch.autograd.Function):
    @staticmethod
    def forward(blocks, rng_state, x, *params):
        with torch.no_grad():
            for block in blocks:
                x = block(x)
        return x

    @staticmethod
    def setup_context(ctx, inputs, output):
        blocks, rng_state, x = inputs[0], inputs[1], inputs[2]
        ctx.blocks, ctx.rng_state = blocks, rng_state
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (saved,) = ctx.saved_tensors
        x = saved.detach().requires_grad_(ctx.needs_input_grad[2])
        params = [p for block in ctx.blocks for p in block.parameters() if p.requires_grad]
        callers_state = torch.get_rng_state()
        torch.set_rng_state(ctx.rng_state)
        try:
            with torch.enable_grad():
                out = x
                for block in ctx.blocks:
                    out = block(out)
        finally:
            torch.set_rng_state(callers_state)
        targets = ([x] if x.requires_grad else []) + params
        grads = list(torch.autograd.grad(out, targets, grad_out, allow_unused=True)) if targets else []
        grad_x = grads.pop(0) if x.requires_grad else None
        return (None, None, grad_x, *grads)


def checkpointed_forward(blocks, x, segments):
    blocks = list(blocks)
    if not isinstance(segments, int) or segments < 1 or segments > len(blocks):
        raise ValueError(f"segments must be in [1, {len(blocks)}], got segments={segments}")
    for part in torch.tensor_split(torch.arange(len(blocks)), segments):
        chunk = [blocks[i] for i in part.tolist()]
        params = [p for block in chunk for p in block.parameters() if p.requires_grad]
        x = _Recompute.apply(chunk, torch.get_rng_state(), x, *params)
    return x
