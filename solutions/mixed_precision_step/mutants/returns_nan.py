"""Mutant: a skipped step reports its loss as NaN ("no loss for a step that did not happen") instead of
the loss it computed (finite, or inf when the forward overflowed).

A NaN must never pass for a loss. Should be caught by every check with a skipped step.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

_AUTOCAST_DTYPES = {"cpu": torch.bfloat16, "cuda": torch.float16}


def amp_train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler,
    batch: tuple[Tensor, Tensor],
    loss_fn: Callable[[Tensor, Tensor], Tensor],
    *,
    max_grad_norm: float | None = None,
    device_type: str = "cpu",
) -> dict:
    if device_type not in _AUTOCAST_DTYPES:
        raise ValueError(f"device_type must be 'cpu' or 'cuda', got device_type={device_type!r}")
    if max_grad_norm is not None and not max_grad_norm > 0:
        raise ValueError(f"max_grad_norm must be > 0 or None, got max_grad_norm={max_grad_norm}")
    inputs, targets = batch
    optimizer.zero_grad()
    # Only the forward pass and the loss run in low precision; the weights stay float32.
    with torch.autocast(device_type=device_type, dtype=_AUTOCAST_DTYPES[device_type]):
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    if max_grad_norm is not None:
        scaler.unscale_(optimizer)  # clip the true gradients, not the scaled ones
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    scale_before = scaler.get_scale()
    scaler.step(optimizer)  # skips optimizer.step() when a gradient is inf or NaN
    scaler.update()
    scale_after = scaler.get_scale()
    skipped = scale_after < scale_before
    return {"loss": float("nan") if skipped else loss.item(), "skipped": skipped, "scale": float(scale_after)}
