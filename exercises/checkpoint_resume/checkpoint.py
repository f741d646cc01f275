"""Checkpoints that resume training bit-identically: implement the two functions below. See README.md."""

from __future__ import annotations

import os

import torch
from torch import nn


def save_checkpoint(path: str | os.PathLike, model: nn.Module, optimizer: torch.optim.Optimizer,
                    scheduler: torch.optim.lr_scheduler.LRScheduler, epoch: int, step: int) -> None:
    """Save the model, optimizer and scheduler state dicts, epoch and step, and the RNG states
    (torch CPU, Python random, all CUDA devices when available) with torch.save, in a format
    that torch.load(path, weights_only=True) accepts (no pickled objects).

    Atomic: write a temporary file in path's directory, then os.replace it over path; if
    saving raises, path is left as it was and no temporary file remains.
    """
    raise NotImplementedError("save_checkpoint")


def load_checkpoint(path: str | os.PathLike, model: nn.Module, optimizer: torch.optim.Optimizer,
                    scheduler: torch.optim.lr_scheduler.LRScheduler) -> dict:
    """Load a checkpoint with torch.load(..., weights_only=True) into the given objects and
    return {"epoch": int, "step": int} as saved.

    Restore the RNG states last (loading the model may draw random numbers).
    FileNotFoundError naming the path when there is no file.
    """
    raise NotImplementedError("load_checkpoint")
