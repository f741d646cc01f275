"""Variant: clips by hand (total norm over all grads), zero_grad(set_to_none=False), float(loss.detach())."""

from __future__ import annotations

import torch


def amp_train_step(model, optimizer, scaler, batch, loss_fn, *, max_grad_norm=None, device_type="cpu"):
    if device_type == "cpu":
        dtype = torch.bfloat16
    elif device_type == "cuda":
        dtype = torch.float16
    else:
        raise ValueError(f"unknown device_type {device_type!r}")
    if max_grad_norm is not None and max_grad_norm <= 0:
        raise ValueError("max_grad_norm must be positive")
    optimizer.zero_grad(set_to_none=False)
    x, y = batch
    with torch.amp.autocast(device_type, dtype=dtype):
        out = model(x)
        loss = loss_fn(out, y)
    scaler.scale(loss).backward()
    if max_grad_norm is not None:
        scaler.unscale_(optimizer)
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        total = torch.sqrt(sum((g.detach().float() ** 2).sum() for g in grads))
        factor = max_grad_norm / (total + 1e-6)
        if factor < 1:
            with torch.no_grad():
                for g in grads:
                    g.mul_(factor)
    before = float(scaler.get_scale())
    scaler.step(optimizer)
    scaler.update()
    after = float(scaler.get_scale())
    return {"loss": float(loss.detach()), "skipped": bool(after < before), "scale": after}
