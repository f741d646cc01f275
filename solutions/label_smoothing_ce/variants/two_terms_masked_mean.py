"""Variant (written from the README alone): the two-term form (1 - epsilon) * nll + epsilon * mean of -log p,
with log p from logits minus their logsumexp over dim 1, the target's entry taken by one_hot multiplication
(class axis moved last), and ignored positions zeroed by multiplying with a float keep mask."""

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
    uniform = -log_p.mean(-1)
    loss = ((1.0 - epsilon) * nll + epsilon * uniform) * keep.to(log_p.dtype)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / keep.sum().to(log_p.dtype)
