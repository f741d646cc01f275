"""Variant: copies x, then scales the copy in place. Another correct answer, written differently."""

from __future__ import annotations

import torch


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    out = x.clone()
    out *= factor
    return out
