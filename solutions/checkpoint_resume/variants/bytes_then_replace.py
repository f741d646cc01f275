"""Variant: serialise into memory first (io.BytesIO), then write the bytes to `<path>.<pid>.tmp` and
os.replace it; Python's random state stored as nested lists, flat top-level keys."""

from __future__ import annotations

import io
import os
import random

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch, step):
    version, internal, gauss = random.getstate()
    payload = {
        "model_state": model.state_dict(),
        "optimizer_state": optimizer.state_dict(),
        "scheduler_state": scheduler.state_dict(),
        "epoch": epoch,
        "step": step,
        "torch_rng": torch.get_rng_state(),
        "python_rng": [version, list(internal), gauss],
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
    }
    buffer = io.BytesIO()
    torch.save(payload, buffer)  # raises here, before any file is touched, if something cannot be pickled
    tmp = f"{os.fspath(path)}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(buffer.getvalue())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_checkpoint(path, model, optimizer, scheduler):
    try:
        payload = torch.load(path, weights_only=True, map_location="cpu")
    except FileNotFoundError as e:
        raise FileNotFoundError(f"checkpoint {os.fspath(path)!r} does not exist") from e
    model.load_state_dict(payload["model_state"])
    optimizer.load_state_dict(payload["optimizer_state"])
    scheduler.load_state_dict(payload["scheduler_state"])
    torch.set_rng_state(payload["torch_rng"])
    version, internal, gauss = payload["python_rng"]
    random.setstate((version, tuple(internal), gauss))
    if payload["cuda_rng"] is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(payload["cuda_rng"])
    return {"epoch": int(payload["epoch"]), "step": int(payload["step"])}
