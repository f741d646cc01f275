"""Epsilon is spread over the C - 1 other classes only (the true class gets exactly 1 - epsilon).

Recorded as: epsilon_over_c_minus_one
"""

from __future__ import annotations

import torch


def label_smoothing_cross_entropy(logits, target, epsilon=0.0, ignore_index=-100, reduction="mean"):
    if epsilon < 0.0 or epsilon > 1.0:
        raise ValueError(f"epsilon={epsilon} is outside [0, 1]")
    if reduction not in {"mean", "sum", "none"}:
        raise ValueError(f"unknown reduction={reduction!r}; use 'mean', 'sum' or 'none'")
    classes = logits.shape[1]
    log_p = (logits - torch.logsumexp(logits, dim=1, keepdim=True)).movedim(1, -1)  # (..., C)
    keep = target != ignore_index
    safe = torch.where(keep, target, torch.zeros_like(target))
    one_hot = torch.nn.functional.one_hot(safe, classes).to(log_p.dtype)
    nll = -(log_p * one_hot).sum(-1)
    uniform = -(log_p.sum(-1) - (log_p * one_hot).sum(-1)) / (classes - 1)
    loss = ((1.0 - epsilon) * nll + epsilon * uniform) * keep.to(log_p.dtype)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / keep.sum().to(log_p.dtype)
