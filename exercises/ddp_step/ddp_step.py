"""Data parallelism by hand: implement the three functions below. See README.md for the full contract.

average_gradients and train_step are called on every rank of an initialised
default process group (torch.distributed.init_process_group has been called;
gloo on CPU), world sizes 1 to 4.

Do not use torch.nn.parallel.DistributedDataParallel,
torch.utils.data.DistributedSampler or anything in torch.distributed.algorithms.
"""

from __future__ import annotations

from typing import Callable

import torch
import torch.distributed as dist
from torch import Tensor, nn


def average_gradients(model: nn.Module) -> None:
    """Average every parameter's gradient over all ranks, in place.

    Every parameter whose .grad is not None ends with the mean of that gradient
    across ranks (the same tensor on every rank). Parameters whose .grad is None
    keep None (the same parameters have None on every rank). The parameters
    themselves do not change.
    """
    raise NotImplementedError("average_gradients")


def train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    inputs: Tensor,
    targets: Tensor,
    loss_fn: Callable[[Tensor, Tensor], Tensor],
) -> float:
    """One synchronous data-parallel training step on this rank's shard.

    inputs and targets are this rank's shard of the global batch (every rank's
    shard has the same size). In order: zero the gradients, forward,
    loss = loss_fn(model(inputs), targets) (mean-reduced), backward,
    average_gradients(model), optimizer.step().

    Returns the loss averaged over all ranks as a Python float, the same on every
    rank. Afterwards every rank holds identical parameters, equal to one
    single-process step on the concatenation of all shards.
    """
    raise NotImplementedError("train_step")


def shard_indices(
    num_samples: int,
    rank: int,
    world_size: int,
    *,
    shuffle: bool = True,
    seed: int = 0,
    epoch: int = 0,
) -> list[int]:
    """The dataset indices this rank reads in this epoch.

    Exactly what DistributedSampler(dataset of num_samples, num_replicas=world_size,
    rank=rank, shuffle=shuffle, seed=seed, drop_last=False) yields after
    set_epoch(epoch):
      1. indices = torch.randperm(num_samples, generator=g).tolist() with
         g = torch.Generator() and g.manual_seed(seed + epoch) when shuffle,
         else list(range(num_samples));
      2. pad to a multiple of world_size by repeating indices from the start;
      3. take every world_size-th index starting at position rank.

    Raises ValueError (naming the argument) when num_samples < 1, world_size < 1,
    or rank is outside [0, world_size).
    """
    raise NotImplementedError("shard_indices")
