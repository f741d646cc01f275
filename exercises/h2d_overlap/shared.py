"""What both zones compute alike for h2d_overlap: the batches' values and the work fn does on them.

The large checks cannot send their batches (hundreds of MB): the probe builds them here, and the
judge computes the same values at the positions it samples. A batch is a fixed tile of values
repeated, plus the batch's index, so batch i and batch i+1 differ everywhere; ``work`` is a chain
of elementwise float32 multiplies and adds, one kernel each, so its result at a position depends
only on the input there and is the same bit for bit on the CPU and on a GPU. Plain torch.
"""

from __future__ import annotations

import torch

TILE = 2**16
PRIME = 65521


def tile(seed: int) -> torch.Tensor:
    """TILE float32 values in [-0.5, 0.5), from ``seed``."""
    index = torch.arange(TILE, dtype=torch.int64)
    return (((index * 40503 + seed * 7919 + 12345) % PRIME).to(torch.float64) / PRIME - 0.5).to(torch.float32)


def batch(seed: int, index: int, numel: int) -> torch.Tensor:
    """Batch ``index``: ``numel`` float32 values, the tile repeated, plus ``index`` (on the CPU, not pinned)."""
    base = tile(seed)
    return base.repeat((numel + TILE - 1) // TILE)[:numel] + float(index)


def batch_at(seed: int, index: int, positions: torch.Tensor) -> torch.Tensor:
    """Batch ``index``'s values at flat ``positions``: what :func:`batch` holds there."""
    return tile(seed)[positions % TILE] + float(index)


def work(x: torch.Tensor, reps: int) -> torch.Tensor:
    """``reps`` rounds of y = y * 0.999 + 0.001 on a new tensor (x unchanged), each op its own kernel."""
    y = x.mul(0.999).add_(0.001)
    for _ in range(reps - 1):
        y.mul_(0.999).add_(0.001)
    return y
