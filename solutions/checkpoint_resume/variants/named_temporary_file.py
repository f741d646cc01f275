"""Variant: pathlib, tempfile.NamedTemporaryFile(delete=False) beside the target, Python's random
state as an int64 tensor, nested sections; checks for the file before torch.load."""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path

import torch


def _python_rng_as_tensor():
    version, internal, gauss = random.getstate()
    return {"version": version, "internal": torch.tensor(internal, dtype=torch.int64), "gauss": gauss}


def save_checkpoint(path, model, optimizer, scheduler, epoch, step):
    target = Path(path)
    state = {
        "training": {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                     "scheduler": scheduler.state_dict()},
        "progress": {"epoch": epoch, "step": step},
        "rng": {"torch": torch.get_rng_state(), "python": _python_rng_as_tensor()},
    }
    if torch.cuda.is_available():
        state["rng"]["cuda"] = torch.cuda.get_rng_state_all()
    tmp = tempfile.NamedTemporaryFile(dir=target.parent, prefix=target.name, suffix=".partial", delete=False)
    try:
        with tmp:
            torch.save(state, tmp)
        os.replace(tmp.name, target)
    except Exception:
        Path(tmp.name).unlink(missing_ok=True)
        raise


def load_checkpoint(path, model, optimizer, scheduler):
    target = Path(path)
    if not target.exists():
        raise FileNotFoundError(f"{target}: no such checkpoint")
    state = torch.load(target, map_location="cpu")  # weights_only=True is the default in torch >= 2.6
    model.load_state_dict(state["training"]["model"])
    optimizer.load_state_dict(state["training"]["optimizer"])
    scheduler.load_state_dict(state["training"]["scheduler"])
    rng = state["rng"]
    torch.set_rng_state(rng["torch"])
    py = rng["python"]
    random.setstate((py["version"], tuple(int(v) for v in py["internal"].tolist()), py["gauss"]))
    if "cuda" in rng and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(rng["cuda"])
    return {"epoch": int(state["progress"]["epoch"]), "step": int(state["progress"]["step"])}
