"""Gradient checkpointing: implement checkpointed_forward below. See README.md for the full contract."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


def checkpointed_forward(blocks: Sequence[nn.Module], x: torch.Tensor, segments: int) -> torch.Tensor:
    """Apply blocks to x in order (x = block(x)), checkpointing `segments` contiguous segments.

    - Segments: sizes as equal as possible, the larger ones first (8 blocks, 3 segments: 3, 3, 2).
    - Forward: every block once, in order, with grad disabled; keep only each segment's input
      (and the CPU RNG state, torch.get_rng_state()) for backward.
    - Backward: recompute each segment from its input with grad enabled (last segment first),
      with the RNG state restored so dropout draws the same masks, and leave the caller's RNG
      state as it was. Each block is called exactly twice in a forward plus backward.
    - Values and gradients (x's and every parameter's) equal the plain loop's; when x does not
      require grad the parameters still get theirs and x is left alone. Nothing requiring grad
      (or torch.no_grad()): the plain forward, each block once, no graph.
    - ValueError naming `segments` unless 1 <= segments <= len(blocks).
    - torch.utils.checkpoint is not allowed.
    """
    raise NotImplementedError("checkpointed_forward")
