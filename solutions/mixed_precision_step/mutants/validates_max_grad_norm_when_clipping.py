"""Mutant: checks max_grad_norm only where it is used, at the clipping, after zero_grad, the forward pass
and the backward have run (the stale gradients are gone, the scaler has scaled a loss).

The ValueError still comes, but the contract says both errors come before anything else happens.
Should be caught by test_rejects_bad_arguments only.
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
    inputs, targets = batch
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=_AUTOCAST_DTYPES[device_type]):
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    if max_grad_norm is not None:
        if not max_grad_norm > 0:  # too late: the step is half done
            raise ValueError(f"max_grad_norm must be > 0 or None, got max_grad_norm={max_grad_norm}")
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    scale_before = scaler.get_scale()
    scaler.step(optimizer)
    scaler.update()
    scale_after = scaler.get_scale()
    return {"loss": loss.item(), "skipped": scale_after < scale_before, "scale": float(scale_after)}
