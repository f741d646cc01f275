"""Correct variant: one flattened all_reduce for all gradients, the loss through all_gather,
shards built with an explicit loop.

Gradients are packed into one buffer (one collective instead of one per
parameter, as DDP's buckets do), averaged, and copied back into each .grad.
The optimizer zeroes the gradients with set_to_none=False (the optimizer holds
every parameter). The loss is gathered from every rank and averaged in rank
order, so every rank computes the same float. Must get full marks.
"""

from __future__ import annotations

import math

import torch
import torch.distributed as dist
from torch import nn


def average_gradients(model: nn.Module) -> None:
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    if not grads:
        return
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= dist.get_world_size()
    offset = 0
    for g in grads:
        n = g.numel()
        g.copy_(flat[offset:offset + n].view_as(g))
        offset += n


def train_step(model, optimizer, inputs, targets, loss_fn) -> float:
    optimizer.zero_grad(set_to_none=False)
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    average_gradients(model)
    optimizer.step()
    gathered = [torch.zeros_like(loss) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, loss.detach())
    return float(torch.stack(gathered).mean())


def shard_indices(num_samples, rank, world_size, *, shuffle=True, seed=0, epoch=0):
    if num_samples < 1:
        raise ValueError("num_samples must be positive")
    if world_size < 1:
        raise ValueError("world_size must be positive")
    if rank < 0 or rank >= world_size:
        raise ValueError(f"rank {rank} is not a valid rank for world_size {world_size}")
    if shuffle:
        generator = torch.Generator()
        generator.manual_seed(seed + epoch)
        order = torch.randperm(num_samples, generator=generator).tolist()
    else:
        order = list(range(num_samples))
    total = world_size * math.ceil(num_samples / world_size)
    mine = []
    position = rank
    while position < total:
        mine.append(order[position % num_samples])  # positions past the end wrap to the start
        position += world_size
    return mine
