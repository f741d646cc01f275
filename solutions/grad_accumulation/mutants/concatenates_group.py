"""Mutant: concatenates the group and runs one forward/backward: the right step, but no memory saved (not accumulation)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import torch


def _groups(batches: Iterable, size: int) -> Iterator[list]:
    group = []
    for item in batches:
        group.append(item)
        if len(group) == size:
            yield group
            group = []
    if group:
        yield group


def train_with_accumulation(model, optimizer, loss_fn, batches, accumulation_steps):
    if accumulation_steps < 1:
        raise ValueError(f"accumulation_steps must be at least 1, got {accumulation_steps}")
    losses = []
    for group in _groups(batches, accumulation_steps):
        optimizer.zero_grad()
        inputs = torch.cat([x for x, _ in group])
        targets = torch.cat([y for _, y in group])
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
