"""Mutant: starts each group's running loss at NaN as a "no value yet" marker and adds to it, so every
returned loss is NaN while the training itself is right.

A NaN must never pass for a loss: before the checks compared through expect_scalar,
`abs(got - w) > tol` was False for NaN and this scored full marks.
Should be caught by: test_returns_group_losses (and the hidden checks that compare losses).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import torch
from torch import Tensor, nn


def _groups(batches: Iterable, size: int) -> Iterator[list]:
    """Consecutive groups of ``size`` items (the last may be shorter), from a one-pass iterable."""
    group = []
    for item in batches:
        group.append(item)
        if len(group) == size:
            yield group
            group = []
    if group:
        yield group


def train_with_accumulation(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable[[Tensor, Tensor], Tensor],
    batches: Iterable[tuple[Tensor, Tensor]],
    accumulation_steps: int,
) -> list[float]:
    if accumulation_steps < 1:
        raise ValueError(f"accumulation_steps must be at least 1, got {accumulation_steps}")
    losses = []
    for group in _groups(batches, accumulation_steps):
        total = sum(inputs.shape[0] for inputs, _ in group)
        optimizer.zero_grad()
        group_loss = float("nan")  # "no loss yet"
        for inputs, targets in group:
            # A mean loss over n samples, weighted n / total: the group's mean loss, summed.
            loss = loss_fn(model(inputs), targets) * (inputs.shape[0] / total)
            loss.backward()
            group_loss += loss.item()
        optimizer.step()
        losses.append(group_loss)
    return losses
