"""Mutant: turns `batches` into a list (to count the micro-batches) before checking accumulation_steps.

The ValueError still comes, but a generator given with a bad accumulation_steps is spent by then: the
contract says to raise before touching the model, the optimizer or `batches`. Should be caught by
test_rejects_bad_accumulation_steps only.
"""

from __future__ import annotations


def train_with_accumulation(model, optimizer, loss_fn, batches, accumulation_steps):
    batches = list(batches)  # too early: a one-pass generator is consumed before the refusal
    if accumulation_steps < 1:
        raise ValueError(f"accumulation_steps must be at least 1, got {accumulation_steps}")
    losses = []
    for start in range(0, len(batches), accumulation_steps):
        group = batches[start:start + accumulation_steps]
        total = sum(inputs.shape[0] for inputs, _ in group)
        optimizer.zero_grad()
        group_loss = 0.0
        for inputs, targets in group:
            loss = loss_fn(model(inputs), targets) * (inputs.shape[0] / total)
            loss.backward()
            group_loss += loss.item()
        optimizer.step()
        losses.append(group_loss)
    return losses
