"""Variant (written from the README alone): the autocast dtype chosen by a match statement, the forward and
loss in a small helper that is the only code under autocast, clipping with clip_grad_norm_(foreach=False) on a
list of the parameters, and the result dict assembled from the scale read before and after update()."""

from __future__ import annotations

import torch


def _autocast_dtype(device_type):
    match device_type:
        case "cpu":
            return torch.bfloat16
        case "cuda":
            return torch.float16
    raise ValueError(f"device_type must be 'cpu' or 'cuda', got {device_type!r}")


def _forward_loss(model, batch, loss_fn, device_type):
    inputs, targets = batch
    with torch.autocast(device_type=device_type, dtype=_autocast_dtype(device_type)):
        return loss_fn(model(inputs), targets)


def amp_train_step(model, optimizer, scaler, batch, loss_fn, *, max_grad_norm=None, device_type="cpu"):
    _autocast_dtype(device_type)
    if max_grad_norm is not None and max_grad_norm <= 0:
        raise ValueError(f"max_grad_norm must be positive, got {max_grad_norm}")
    optimizer.zero_grad()
    loss = _forward_loss(model, batch, loss_fn, device_type)
    scaler.scale(loss).backward()
    if max_grad_norm is not None:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(list(model.parameters()), max_grad_norm, foreach=False)
    before = scaler.get_scale()
    scaler.step(optimizer)
    scaler.update()
    after = scaler.get_scale()
    return {"loss": float(loss.item()), "skipped": bool(after < before), "scale": float(after)}
