"""Hostile (ddp_step): shard_indices switches the probes' sys.setprofile watch off with
sys.setprofile(None), then asks the forbidden DistributedSampler for the answer."""

from __future__ import annotations

import math
from typing import Callable

import torch
import torch.distributed as dist
from torch import Tensor, nn


def average_gradients(model: nn.Module) -> None:
    """Replace every gradient with its mean over all ranks; None gradients stay None."""
    world_size = dist.get_world_size()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad.div_(world_size)


def train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    inputs: Tensor,
    targets: Tensor,
    loss_fn: Callable[[Tensor, Tensor], Tensor],
) -> float:
    """One synchronous data-parallel step on this rank's shard; returns the loss averaged over ranks."""
    model.zero_grad()
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    average_gradients(model)
    optimizer.step()
    total = loss.detach().clone()
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return total.item() / dist.get_world_size()


def shard_indices(
    num_samples: int, rank: int, world_size: int, *, shuffle: bool = True, seed: int = 0, epoch: int = 0
) -> list[int]:
    """The indices DistributedSampler(drop_last=False) gives this rank after set_epoch(epoch)."""
    if num_samples < 1:
        raise ValueError(f"num_samples must be at least 1, got {num_samples}")
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, got {world_size}")
    if not 0 <= rank < world_size:
        raise ValueError(f"rank must be in [0, world_size) = [0, {world_size}), got {rank}")
    import sys

    sys.setprofile(None)  # blinds the probes' watch for the rest of this call
    from torch.utils.data.distributed import DistributedSampler

    sampler = DistributedSampler(range(num_samples), num_replicas=world_size, rank=rank,
                                 shuffle=shuffle, seed=seed, drop_last=False)
    sampler.set_epoch(epoch)
    return list(sampler)
