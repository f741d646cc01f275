"""Variant (written from the README alone): holds each group's micro-batches (at most k) in a list, so the
group's total size N is known before any backward; a nested flush function scales each micro loss by n_i / N,
and is called whenever the list is full and once more for a trailing partial group."""

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
            group_loss += loss.item()
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
