"""Variant, written from the README alone (issue 13, item 3): each micro loss is scaled by its size n_i
before backward and the summed gradients are divided by the group's N before the step (the README's
second way); zero_grad(set_to_none=False); the group's loss is kept as a float64 tensor until the end.

It checks that the NaN-proof rewrite of the checks still gives any correct answer full marks.
"""

from __future__ import annotations

import itertools

import torch


def train_with_accumulation(model, optimizer, loss_fn, batches, accumulation_steps):
    if not accumulation_steps >= 1:
        raise ValueError(f"accumulation_steps must be >= 1 (got {accumulation_steps!r})")
    stream = iter(batches)
    params = [p for p in model.parameters() if p.requires_grad]
    losses: list[float] = []
    while True:
        group = list(itertools.islice(stream, accumulation_steps))
        if not group:
            return losses
        optimizer.zero_grad(set_to_none=False)
        weighted = torch.zeros((), dtype=torch.float64)
        count = 0
        for inputs, targets in group:
            n = int(inputs.shape[0])
            loss = loss_fn(model(inputs), targets)
            (loss * n).backward()
            weighted += loss.detach().double() * n
            count += n
        with torch.no_grad():
            for p in params:
                if p.grad is not None:
                    p.grad.div_(count)
        optimizer.step()
        losses.append(float(weighted / count))
