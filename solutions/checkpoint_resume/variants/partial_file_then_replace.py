"""Variant (written from the README alone): torch.save straight to `<path>.partial` beside the target, removed
on failure, then os.replace; Python's random state saved as it is; os.path.exists before loading."""

from __future__ import annotations

import os
import random

import torch
from torch import nn


def _rng_state() -> dict:
    state = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def save_checkpoint(path, model: nn.Module, optimizer, scheduler, epoch: int, step: int) -> None:
    path = os.fspath(path)
    partial = path + ".partial"
    payload = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "epoch": int(epoch),
        "step": int(step),
        "rng": _rng_state(),
    }
    try:
        torch.save(payload, partial)
        os.replace(partial, path)
    except BaseException:
        if os.path.exists(partial):
            os.remove(partial)
        raise


def load_checkpoint(path, model: nn.Module, optimizer, scheduler) -> dict:
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no checkpoint at {path}")
    payload = torch.load(path, map_location="cpu")
    model.load_state_dict(payload["model"])
    optimizer.load_state_dict(payload["optimizer"])
    scheduler.load_state_dict(payload["scheduler"])
    rng = payload["rng"]
    torch.set_rng_state(rng["torch"])
    version, internal, gauss = rng["python"]
    random.setstate((version, tuple(internal), gauss))
    if "cuda" in rng and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(rng["cuda"])
    return {"epoch": int(payload["epoch"]), "step": int(payload["step"])}
