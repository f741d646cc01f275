"""Mutant: marks ignored positions with NaN and reduces with nansum/nanmean: 'mean' and 'sum' come out
right, but reduction='none' returns NaN at ignored positions where the contract says 0.

A NaN must never pass for a loss. Should be caught by the checks of reduction='none' with ignored positions.
"""

from __future__ import annotations

import torch
from torch import Tensor

REDUCTIONS = ("mean", "sum", "none")


def label_smoothing_cross_entropy(logits: Tensor, target: Tensor, epsilon: float = 0.0,
                                  ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """Cross-entropy against the smoothed target q = (1 - epsilon) * one_hot + epsilon / C."""
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"epsilon must be in [0, 1], got epsilon={epsilon}")
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got reduction={reduction!r}")
    num_classes = logits.shape[1]
    log_probs = torch.log_softmax(logits, dim=1)           # stable: no exp overflow
    keep = target != ignore_index
    safe_target = torch.where(keep, target, torch.zeros_like(target))
    nll = -log_probs.gather(1, safe_target.unsqueeze(1)).squeeze(1)
    smooth = -log_probs.sum(dim=1) / num_classes           # -mean over all C classes
    loss = (1.0 - epsilon) * nll + epsilon * smooth
    loss = torch.where(keep, loss, torch.full_like(loss, float("nan")))  # ignored: no loss
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.nansum()
    return loss.nansum() / keep.sum()                       # 0 / 0 = nan when all are ignored
