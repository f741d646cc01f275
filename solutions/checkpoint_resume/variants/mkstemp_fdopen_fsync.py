"""Variant (written from the README alone): tempfile.mkstemp in the target's folder, the state written through
os.fdopen and fsync'd before os.replace, the temporary unlinked on any failure; the generator states kept in one
"rng" section, Python's state as a list of its parts; load lets torch.load's FileNotFoundError through."""

from __future__ import annotations

import os
import random
import tempfile

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch, step):
    rng = {"torch": torch.get_rng_state(), "python": list(random.getstate())}
    if torch.cuda.is_available():
        rng["cuda"] = torch.cuda.get_rng_state_all()
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
             "scheduler": scheduler.state_dict(), "epoch": int(epoch), "step": int(step), "rng": rng}
    folder = os.path.dirname(os.path.abspath(os.fspath(path)))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".checkpoint-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_checkpoint(path, model, optimizer, scheduler):
    state = torch.load(path, weights_only=True)  # a missing file raises FileNotFoundError naming it
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    rng = state["rng"]
    torch.set_rng_state(rng["torch"])
    version, internal, gauss = rng["python"]
    random.setstate((version, tuple(internal), gauss))
    if "cuda" in rng and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(rng["cuda"])
    return {"epoch": int(state["epoch"]), "step": int(state["step"])}
