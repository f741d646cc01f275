"""Variant: autocast's default dtype per device, unscale_ on every step, clip_grad_norm_ with foreach."""

from __future__ import annotations

import torch
from torch.nn.utils import clip_grad_norm_


def amp_train_step(model, optimizer, scaler, batch, loss_fn, *, max_grad_norm=None, device_type="cpu"):
    if device_type not in ("cpu", "cuda"):
        raise ValueError("device_type must be 'cpu' or 'cuda'")
    if max_grad_norm is not None and not max_grad_norm > 0:
        raise ValueError(f"max_grad_norm={max_grad_norm} must be > 0")
    inputs, targets = batch
    optimizer.zero_grad()
    with torch.autocast(device_type):  # bfloat16 on CPU, float16 on CUDA by default
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    if max_grad_norm is not None:
        clip_grad_norm_(model.parameters(), max_grad_norm, foreach=True)
    old_scale = scaler.get_scale()
    scaler.step(optimizer)
    scaler.update()
    new_scale = scaler.get_scale()
    return dict(loss=loss.item(), skipped=new_scale < old_scale, scale=float(new_scale))
