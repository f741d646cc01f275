"""The returned losses are 0-d tensors (detached), not Python floats.

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
            loss = loss_fn(model(inputs), targets) * (inputs.shape[0] / total)
            loss.backward()
            group_loss = group_loss + loss.detach()
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
