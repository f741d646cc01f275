"""Mutant: trains right, but reduces the loss into a buffer filled with NaN as a "not reduced yet" marker
and adds to it, so train_step returns NaN on every rank.

A NaN must never pass for the mean loss: before the checks compared through expect_scalar,
`abs(got - expected) > tol` was False for NaN and this scored full marks.
Should be caught by: test_train_step_returns_mean_loss.
"""

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
    total = torch.full_like(loss.detach(), float("nan"))  # "not reduced yet"
    total += loss.detach()
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
    if shuffle:
        g = torch.Generator()
        g.manual_seed(seed + epoch)
        indices = torch.randperm(num_samples, generator=g).tolist()
    else:
        indices = list(range(num_samples))
    total = math.ceil(num_samples / world_size) * world_size
    padding = total - num_samples
    indices += (indices * math.ceil(padding / num_samples))[:padding]
    return indices[rank:total:world_size]
