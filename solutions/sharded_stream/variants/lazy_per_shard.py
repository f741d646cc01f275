"""Variant: itertools instead of slicing lists. The generator is seeded with a splitmix64 mix of
(seed, epoch); each shard's records are shuffled before dealing (one permutation per shard, drawn
in the epoch's shard order, so every slot draws the same ones), and __iter__ returns an
itertools.islice over the shuffled shards (whole shards) or over their chained records (split
records) instead of being a generator function."""

from __future__ import annotations

import itertools

import torch
from torch.utils.data import IterableDataset, get_worker_info

_MASK = (1 << 63) - 1


def _mix(seed: int, epoch: int) -> int:
    """A deterministic 63-bit seed from (seed, epoch) (splitmix64-style), so nearby pairs differ."""
    z = (seed * 0x9E3779B97F4A7C15 + epoch * 0xBF58476D1CE4E5B9 + 0x94D049BB133111EB) & ((1 << 64) - 1)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & ((1 << 64) - 1)
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & ((1 << 64) - 1)
    return (z ^ (z >> 31)) & _MASK


class ShardedStream(IterableDataset):
    def __init__(self, shards, *, rank=0, world_size=1, seed=0):
        shards = tuple(tuple(s) for s in shards)
        problems = [(not shards, "shards is empty"),
                    (world_size < 1, f"world_size must be at least 1 (got {world_size})"),
                    (not 0 <= rank < max(world_size, 1), f"rank {rank} is outside [0, world_size)")]
        for bad, message in problems:
            if bad:
                raise ValueError(message)
        self._shards, self._rank, self._world, self._seed = shards, rank, world_size, seed
        self._epoch = 0

    def set_epoch(self, epoch):
        self._epoch = int(epoch)

    def _shuffled(self, g, j):
        shard = self._shards[j]
        return (shard[i] for i in torch.randperm(len(shard), generator=g).tolist())

    def __iter__(self):
        info = get_worker_info()
        per_rank = info.num_workers if info is not None else 1
        slot = self._rank * per_rank + (info.id if info is not None else 0)
        slots = self._world * per_rank
        g = torch.Generator()
        g.manual_seed(_mix(self._seed, self._epoch))
        order = torch.randperm(len(self._shards), generator=g).tolist()
        # Every slot draws the per-shard permutations in the same order, so they agree on them.
        shuffled = [list(self._shuffled(g, j)) for j in order]
        if len(order) >= slots:
            return itertools.chain.from_iterable(itertools.islice(shuffled, slot, None, slots))
        return itertools.islice(itertools.chain.from_iterable(shuffled), slot, None, slots)
