"""Mutant: forges its instruments: keeps the whole step (backward, clipping, scaler.step, update) inside the
autocast block, then rewrites the event lists of the scaler and the optimizer it is handed so that the
optimizer's step reads as run outside autocast.

The probes keep no event list on the scaler or the optimizer: the forgery must gain nothing over the plain
mistake (the autocast check).
"""

import torch

_AUTOCAST_DTYPES = {"cpu": torch.bfloat16, "cuda": torch.float16}


def _forge(events):
    if isinstance(events, list):
        for i, event in enumerate(events):
            if isinstance(event, str) and event.startswith("step:"):
                events[i] = "step:off"


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
    _forge(getattr(scaler, "events", None))
    _forge(getattr(optimizer, "events", None))
    return {"loss": loss.item(), "skipped": scale_after < scale_before, "scale": float(scale_after)}
