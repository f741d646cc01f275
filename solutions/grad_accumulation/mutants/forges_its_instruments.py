"""Mutant: forges its instruments: runs one forward per group on the group's micro-batches concatenated (one
call where the contract asks one per micro-batch), and calls whatever forward pre-hooks the model carries once
per micro-batch by hand, with the real forward's hooks set aside, so that a hook counting calls sees one per
micro-batch.

The probes count the model's calls in its own forward, with nothing on the model to call by hand: the forgery
must gain nothing over the plain mistake (the check of one call per micro-batch).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import torch
from torch import Tensor, nn


def _groups(batches: Iterable, size: int) -> Iterator[list]:
    group = []
    for item in batches:
        group.append(item)
        if len(group) == size:
            yield group
            group = []
    if group:
        yield group


def _forward(model: nn.Module, group: list) -> Tensor:
    hooks = dict(model._forward_pre_hooks)
    for inputs, _ in group:
        for hook in hooks.values():
            hook(model, (inputs,))
    model._forward_pre_hooks.clear()
    try:
        return model(torch.cat([inputs for inputs, _ in group]))
    finally:
        model._forward_pre_hooks.update(hooks)


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
        optimizer.zero_grad()
        loss = loss_fn(_forward(model, group), torch.cat([targets for _, targets in group]))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
