"""Correct variant: gradients divided by the world size before the summing all_reduce, the
loss scaled the same way, padding with itertools.cycle.

(g0/n + g1/n + ...) is the mean, so dividing first is as good as dividing
after. Gradients are collected by name and reduced one by one; the returned
loss is float(sum of loss/n). Errors are checked in a different order from the
reference (rank last, so world_size < 1 names world_size). Must get full marks.
"""

from __future__ import annotations

import itertools

import torch
import torch.distributed as dist


def average_gradients(model):
    n = dist.get_world_size()
    for _, param in model.named_parameters():
        if param.grad is None:
            continue
        param.grad.div_(n)
        dist.all_reduce(param.grad, op=dist.ReduceOp.SUM)


def train_step(model, optimizer, inputs, targets, loss_fn):
    for param in model.parameters():
        param.grad = None
    output = model(inputs)
    loss = loss_fn(output, targets)
    loss.backward()
    average_gradients(model)
    optimizer.step()
    scaled = loss.detach() / dist.get_world_size()
    dist.all_reduce(scaled)
    return float(scaled)


def shard_indices(num_samples, rank, world_size, *, shuffle=True, seed=0, epoch=0):
    for name, value, low in (("num_samples", num_samples, 1), ("world_size", world_size, 1)):
        if value < low:
            raise ValueError(f"{name}={value} must be >= {low}")
    if rank not in range(world_size):
        raise ValueError(f"rank={rank} must lie in [0, {world_size})")
    if shuffle:
        g = torch.Generator().manual_seed(seed + epoch)
        order = torch.randperm(num_samples, generator=g).tolist()
    else:
        order = list(range(num_samples))
    per_rank = -(-num_samples // world_size)
    padded = list(itertools.islice(itertools.cycle(order), per_rank * world_size))
    return padded[rank::world_size]
