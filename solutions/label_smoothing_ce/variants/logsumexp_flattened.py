"""Variant: moves the class axis last and flattens to (positions, C), then writes the loss as
logsumexp(x) - (1 - epsilon) * x_y - epsilon * mean(x); masks with a float multiply.

Correct: must earn full marks.
"""

from __future__ import annotations

import torch
from torch import Tensor


def label_smoothing_cross_entropy(logits: Tensor, target: Tensor, epsilon: float = 0.0,
                                  ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    if epsilon < 0 or epsilon > 1:
        raise ValueError(f"epsilon={epsilon} is outside [0, 1]")
    if reduction not in {"mean", "sum", "none"}:
        raise ValueError(f"unknown reduction {reduction!r}")
    C = logits.size(1)
    flat = logits.movedim(1, -1).reshape(-1, C)
    y = target.reshape(-1)
    keep = (y != ignore_index).to(logits.dtype)
    y = y.clamp(0, C - 1) * (y != ignore_index)
    lse = torch.logsumexp(flat, dim=-1)
    picked = flat[torch.arange(flat.size(0)), y]
    per_position = (lse - (1 - epsilon) * picked - epsilon * flat.mean(dim=-1)) * keep
    if reduction == "none":
        return per_position.reshape(target.shape)
    total = per_position.sum()
    return total if reduction == "sum" else total / keep.sum()
