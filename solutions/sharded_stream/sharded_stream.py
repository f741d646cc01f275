"""Reference: one torch.Generator per iteration seeded from (seed, epoch); a shard permutation every
slot computes alike, dealt to slots by stride (or, with fewer shards than slots, the records dealt
by stride); then the slot's records shuffled with the same generator."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import torch
from torch.utils.data import get_worker_info


class ShardedStream(torch.utils.data.IterableDataset):
    """Every record exactly once per epoch across the world_size * num_workers slots."""

    def __init__(self, shards: Sequence[Sequence[int]], *, rank: int = 0, world_size: int = 1,
                 seed: int = 0):
        if len(shards) == 0:
            raise ValueError("shards must hold at least one shard")
        if world_size < 1:
            raise ValueError(f"world_size must be >= 1, got {world_size}")
        if not 0 <= rank < world_size:
            raise ValueError(f"rank must be in [0, {world_size}), got {rank}")
        self.shards = [list(shard) for shard in shards]
        self.rank, self.world_size, self.seed = rank, world_size, seed
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        # An attribute: the DataLoader pickles (or forks) the dataset into its workers with it.
        self.epoch = epoch

    def _slot(self) -> tuple[int, int]:
        """(this slot's number, the number of slots), from the rank and the DataLoader worker."""
        info = get_worker_info()
        num_workers, worker = (1, 0) if info is None else (info.num_workers, info.id)
        return self.rank * num_workers + worker, self.world_size * num_workers

    def __iter__(self) -> Iterator[int]:
        slot, slots = self._slot()
        # Same (seed, epoch) -> same generator in every rank and worker, so they agree on the
        # shard permutation without talking; a fresh generator per iteration makes epochs repeatable.
        g = torch.Generator().manual_seed(self.seed * 10_007 + self.epoch)
        order = torch.randperm(len(self.shards), generator=g).tolist()
        if len(self.shards) >= slots:
            mine = [record for j in order[slot::slots] for record in self.shards[j]]
        else:  # fewer shards than slots: deal the records themselves, so no slot idles
            mine = [record for j in order for record in self.shards[j]][slot::slots]
        for i in torch.randperm(len(mine), generator=g).tolist():
            yield mine[i]
