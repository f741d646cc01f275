"""Variant, written from the README alone (issue 13, item 3): the gradients are flattened into one
buffer for a single all_reduce, the loss is reduced in float64, and shard_indices pads by cycling
with itertools.

It checks that the NaN-proof rewrite of the checks still gives any correct answer full marks.
"""

from __future__ import annotations

import itertools

import torch
import torch.distributed as dist


def average_gradients(model) -> None:
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    if not grads:
        return
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= dist.get_world_size()
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()


def train_step(model, optimizer, inputs, targets, loss_fn) -> float:
    optimizer.zero_grad()
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    average_gradients(model)
    optimizer.step()
    mean = loss.detach().to(torch.float64).reshape(1)
    dist.all_reduce(mean)
    return float(mean.item() / dist.get_world_size())


def shard_indices(num_samples, rank, world_size, *, shuffle=True, seed=0, epoch=0) -> list[int]:
    if num_samples < 1:
        raise ValueError(f"num_samples must be >= 1, got {num_samples}")
    if world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size}")
    if not 0 <= rank < world_size:
        raise ValueError(f"rank must be in [0, world_size), got rank={rank} with world_size={world_size}")
    if shuffle:
        g = torch.Generator()
        g.manual_seed(seed + epoch)
        order = torch.randperm(num_samples, generator=g).tolist()
    else:
        order = list(range(num_samples))
    per_rank = -(-num_samples // world_size)
    padded = list(itertools.islice(itertools.cycle(order), per_rank * world_size))
    return padded[rank::world_size]
