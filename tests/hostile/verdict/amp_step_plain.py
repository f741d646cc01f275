"""Keeps the whole step (backward, clipping, scaler.step, update) inside the autocast block."""

import torch

_AUTOCAST_DTYPES = {"cpu": torch.bfloat16, "cuda": torch.float16}


def amp_train_step(model, optimizer, scaler, batch, loss_fn, *, max_grad_norm=None, device_type="cpu"):
    if device_type not in _AUTOCAST_DTYPES:
        raise ValueError(f"device_type must be 'cpu' or 'cuda', got device_type={device_type!r}")
    if max_grad_norm is not None and not max_grad_norm > 0:
        raise ValueError(f"max_grad_norm must be > 0 or None, got max_grad_norm={max_grad_norm}")
    inputs, targets = batch
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=_AUTOCAST_DTYPES[device_type]):
        loss = loss_fn(model(inputs), targets)
        scaler.scale(loss).backward()
        if max_grad_norm is not None:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        scale_before = scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
    scale_after = scaler.get_scale()
    return {"loss": loss.item(), "skipped": scale_after < scale_before, "scale": float(scale_after)}
