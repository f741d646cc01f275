"""Variant: builds the dense smoothed target q with one_hot (class axis moved to dim 1) and
takes -(q * log_softmax).sum(1); fills ignored positions with masked_fill and returns an
explicit nan for a mean over nothing.

Correct: must earn full marks.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


def label_smoothing_cross_entropy(logits: Tensor, target: Tensor, epsilon: float = 0.0,
                                  ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', not {reduction!r}")
    if not (0.0 <= epsilon <= 1.0):
        raise ValueError(f"epsilon must lie in [0, 1] (got {epsilon})")
    C = logits.shape[1]
    ignored = target == ignore_index
    one_hot = F.one_hot(target.masked_fill(ignored, 0), C).movedim(-1, 1).to(logits.dtype)
    q = one_hot * (1.0 - epsilon) + epsilon / C
    loss = -(q * F.log_softmax(logits, dim=1)).sum(dim=1)
    loss = loss.masked_fill(ignored, 0.0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    count = int((~ignored).sum())
    if count == 0:
        return torch.tensor(float("nan"), dtype=logits.dtype)
    return loss.sum() / count
