"""Mutant: forbidden: hands each segment to torch.utils.checkpoint.checkpoint, the API the exercise is
about writing (it also runs the forward with grad enabled, under its own saved-tensor hooks)."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks: Sequence[nn.Module], x: torch.Tensor, segments: int) -> torch.Tensor:
    blocks = list(blocks)
    if not 1 <= segments <= len(blocks):
        raise ValueError(f"segments must be between 1 and len(blocks), got segments={segments}")
    size, extra = divmod(len(blocks), segments)
    start = 0
    for i in range(segments):
        chunk = blocks[start:start + size + (1 if i < extra else 0)]
        start += len(chunk)

        def run(h, chunk=chunk):
            for block in chunk:
                h = block(h)
            return h

        x = checkpoint(run, x, use_reentrant=False, preserve_rng_state=True)
    return x
