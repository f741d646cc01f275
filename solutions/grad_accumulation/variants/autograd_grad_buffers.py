"""Variant: groups with itertools.islice, sums torch.autograd.grad results in its own buffers, writes .grad at the end."""

from __future__ import annotations

import itertools

import torch


def train_with_accumulation(model, optimizer, loss_fn, batches, accumulation_steps):
    if accumulation_steps < 1:
        raise ValueError(f"bad accumulation_steps={accumulation_steps!r}")
    params = [p for p in model.parameters() if p.requires_grad]
    stream = iter(batches)
    losses = []
    while group := list(itertools.islice(stream, accumulation_steps)):
        sizes = torch.tensor([float(x.shape[0]) for x, _ in group], dtype=torch.float64)
        weights = (sizes / sizes.sum()).tolist()
        optimizer.zero_grad()
        sums = [torch.zeros_like(p) for p in params]
        total = 0.0
        for (inputs, targets), w in zip(group, weights):
            loss = loss_fn(model(inputs), targets)
            for acc, g in zip(sums, torch.autograd.grad(loss, params)):
                acc.add_(g, alpha=w)
            total += w * float(loss)
        for p, acc in zip(params, sums):
            p.grad = acc
        optimizer.step()
        losses.append(total)
    return losses
