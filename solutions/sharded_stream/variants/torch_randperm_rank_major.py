"""Variant (written from the README alone): one torch.Generator per iteration seeded from (seed, epoch) by
seed * 1_000_003 + epoch, torch.randperm for the shard order and for each shard's records, slots numbered
rank-major (rank * num_workers + worker), shuffled shards dealt by stride; with fewer shards than slots the
epoch's records are lined up and dealt one by one."""

from __future__ import annotations

import torch
from torch.utils.data import IterableDataset, get_worker_info


class ShardedStream(IterableDataset):
    def __init__(self, shards, *, rank=0, world_size=1, seed=0):
        super().__init__()
        if len(shards) == 0:
            raise ValueError("shards must hold at least one shard")
        if world_size < 1:
            raise ValueError(f"world_size must be >= 1, got {world_size}")
        if not 0 <= rank < world_size:
            raise ValueError(f"rank must be in [0, world_size), got rank={rank}")
        self.shards = [list(s) for s in shards]
        self.rank, self.world_size, self.seed = rank, world_size, seed
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def _shuffled(self, generator):
        order = torch.randperm(len(self.shards), generator=generator).tolist()
        out = []
        for j in order:
            shard = self.shards[j]
            perm = torch.randperm(len(shard), generator=generator).tolist()
            out.append([shard[i] for i in perm])
        return out

    def __iter__(self):
        info = get_worker_info()
        workers, worker = (1, 0) if info is None else (info.num_workers, info.id)
        slots = self.world_size * workers
        slot = self.rank * workers + worker
        generator = torch.Generator().manual_seed(self.seed * 1_000_003 + self.epoch)
        shards = self._shuffled(generator)
        if len(shards) >= slots:
            for shard in shards[slot::slots]:
                yield from shard
        else:
            records = [record for shard in shards for record in shard]
            yield from records[slot::slots]
