"""Gradient accumulation: implement the function below. See README.md for the full contract."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch
from torch import Tensor, nn


def train_with_accumulation(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable[[Tensor, Tensor], Tensor],
    batches: Iterable[tuple[Tensor, Tensor]],
    accumulation_steps: int,
) -> list[float]:
    """Train on micro-batches, one optimizer step per group of ``accumulation_steps``.

    Groups are consecutive micro-batches (the last one may be shorter and makes a step
    too). At each step, ``.grad`` holds the gradient of the group's full-batch loss:
    the micro-batch mean losses weighted by their sizes (inputs.shape[0]), i.e. what
    ``loss_fn`` gives on the group's micro-batches concatenated. Per group:
    ``optimizer.zero_grad()`` once before the first backward, ``optimizer.step()``
    once after the last. ``batches`` is iterated once (it may be a generator).

    Returns one Python float per step: the group's full-batch loss before the step.
    No batches: returns [] without calling the optimizer.
    Raises ValueError naming ``accumulation_steps`` when it is < 1.
    """
    raise NotImplementedError("train_with_accumulation")
