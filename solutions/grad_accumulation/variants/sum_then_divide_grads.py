"""Variant: streams micro-batches, backward on n_i * loss_i, divides the gradients by the group's size before the step."""

from __future__ import annotations

import torch


def train_with_accumulation(model, optimizer, loss_fn, batches, accumulation_steps):
    if not accumulation_steps >= 1:
        raise ValueError("accumulation_steps must be >= 1")
    losses: list[float] = []
    count = samples = 0
    weighted = 0.0

    def finish():
        with torch.no_grad():
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.div_(samples)
        optimizer.step()
        losses.append(weighted / samples)

    for inputs, targets in batches:
        if count == 0:
            optimizer.zero_grad(set_to_none=False)
        n = len(inputs)
        loss = loss_fn(model(inputs), targets)
        (loss * n).backward()
        weighted += loss.item() * n
        samples += n
        count += 1
        if count == accumulation_steps:
            finish()
            count = samples = 0
            weighted = 0.0
    if count:
        finish()
    return losses
