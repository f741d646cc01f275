"""Mutant: delegates to the forbidden F.cross_entropy (right numbers, no credit)."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor


def label_smoothing_cross_entropy(logits: Tensor, target: Tensor, epsilon: float = 0.0,
                                  ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"epsilon must be in [0, 1], got epsilon={epsilon}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"bad reduction={reduction!r}")
    return F.cross_entropy(logits, target, label_smoothing=epsilon, ignore_index=ignore_index,
                           reduction=reduction)
