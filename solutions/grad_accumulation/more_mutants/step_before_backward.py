"""Mutant: steps at the group's last micro-batch before its backward: the step misses that micro-batch's gradient."""

from __future__ import annotations

from collections.abc import Iterable, Iterator


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
        total = sum(x.shape[0] for x, _ in group)
        optimizer.zero_grad()
        group_loss = 0.0
        for i, (inputs, targets) in enumerate(group):
            loss = loss_fn(model(inputs), targets) * (inputs.shape[0] / total)
            group_loss += loss.item()
            if i == len(group) - 1:
                optimizer.step()
            loss.backward()
        losses.append(group_loss)
    return losses
