"""Inputs both zones make alike: the large q, k, v of the memory checks, from a seed and a shape.

The memory checks run shapes too large to send (tens of MB each way): the probe builds them here
on the CPU, moves them to the GPU and returns a few rows of the output; the judge builds the same
rows of q and the same k and v here, and computes those rows of attention itself. Every value is an
exact function of its index (integer arithmetic, then one division), so both zones get the same
bits whatever their torch. Plain torch, no randomness, nothing that decides.
"""

from __future__ import annotations

import torch

#: Values are multiples of 1/PRIME - 1/2: spread over [-0.5, 0.5), no pattern attention could exploit.
PRIME = 65521


def values(seed: int, which: int, shape: tuple[int, ...], dtype: torch.dtype = torch.float32,
           rows: torch.Tensor | None = None) -> torch.Tensor:
    """A tensor of ``shape`` (B, H, L, D) of values in [-1, 1) for ``which`` (0: q, 1: k, 2: v); with ``rows``,
    only those rows (index 2) of it, the same values they have in the whole tensor."""
    b, h, length, d = shape
    rows = torch.arange(length) if rows is None else rows
    index = (torch.arange(b).view(b, 1, 1, 1) * h + torch.arange(h).view(1, h, 1, 1)) * length
    index = (index + rows.view(1, 1, -1, 1)) * d + torch.arange(d).view(1, 1, 1, d)
    hashed = (index * 40503 + (seed * 3 + which) * 7919 + 12345) % PRIME
    return (hashed.to(torch.float64) * (2.0 / PRIME) - 1.0).to(dtype)
