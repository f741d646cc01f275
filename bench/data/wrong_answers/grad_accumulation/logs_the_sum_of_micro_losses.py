"""The logged loss adds up the micro losses before scaling: the sum of the means, not the group's mean loss.

Recorded as: nothing
"""

from __future__ import annotations


def train_with_accumulation(model, optimizer, loss_fn, batches, accumulation_steps):
    if accumulation_steps < 1:
        raise ValueError(f"accumulation_steps must be >= 1, got {accumulation_steps}")
    losses = []
    group = []

    def flush():
        total = sum(inputs.shape[0] for inputs, _ in group)
        optimizer.zero_grad()
        group_loss = 0.0
        for inputs, targets in group:
            micro = loss_fn(model(inputs), targets)
            (micro * (inputs.shape[0] / total)).backward()
            group_loss += micro.item()
        optimizer.step()
        losses.append(group_loss)
        group.clear()

    for batch in batches:
        group.append(batch)
        if len(group) == accumulation_steps:
            flush()
    if group:
        flush()
    return losses
