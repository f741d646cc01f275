"""Variant: the reentrant design of torch.utils.checkpoint, written out.

What differs from the reference: the Function's tensor inputs are x and a zero-size dummy
tensor that requires grad (only when some parameter does), instead of the parameters
themselves; backward calls torch.autograd.backward on the recomputed output, so the
parameters' .grad accumulate there and only the input's gradient is returned. The split
comes from torch.tensor_split, and the RNG state is put back by hand (get/set) instead of
torch.random.fork_rng.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


class _Recompute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run, x, dummy):
        ctx.run = run
        ctx.rng = torch.get_rng_state()
        ctx.save_for_backward(x)
        return run(x)  # autograd runs Function.forward with grad disabled

    @staticmethod
    def backward(ctx, grad_out):
        (saved,) = ctx.saved_tensors
        inp = saved.detach()
        inp.requires_grad = saved.requires_grad
        caller_rng = torch.get_rng_state()
        torch.set_rng_state(ctx.rng)
        try:
            with torch.enable_grad():
                out = ctx.run(inp)
        finally:
            torch.set_rng_state(caller_rng)
        torch.autograd.backward(out, grad_out)
        return None, inp.grad if saved.requires_grad else None, None


def checkpointed_forward(blocks: Sequence[nn.Module], x: torch.Tensor, segments: int) -> torch.Tensor:
    n = len(blocks)
    if segments < 1 or segments > n:
        raise ValueError(f"need 1 <= segments <= {n} (the number of blocks), got segments={segments}")
    trainable = any(p.requires_grad for b in blocks for p in b.parameters())
    dummy = torch.empty(0, requires_grad=trainable)
    for idx in torch.tensor_split(torch.arange(n), segments):
        chunk = [blocks[i] for i in idx.tolist()]

        def run(h, chunk=chunk):
            for block in chunk:
                h = block(h)
            return h

        x = _Recompute.apply(run, x, dummy)
    return x
