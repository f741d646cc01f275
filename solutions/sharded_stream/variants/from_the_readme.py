"""Variant, written from the README alone as a candidate would: random.Random seeded with the string
"seed:epoch" (deterministic in every process), slots numbered worker-major (worker * world_size +
rank), shuffled shards dealt in contiguous blocks, and each shard's records shuffled on their own
(a generator per shard) before being yielded shard after shard."""

from __future__ import annotations

import random

from torch.utils.data import IterableDataset, get_worker_info


class ShardedStream(IterableDataset):
    def __init__(self, shards, *, rank=0, world_size=1, seed=0):
        if not shards:
            raise ValueError("need at least one shard in shards")
        if world_size < 1:
            raise ValueError(f"world_size={world_size}: must be positive")
        if rank < 0 or rank >= world_size:
            raise ValueError(f"rank={rank} not valid for world_size={world_size}")
        self.shards = shards
        self.rank = rank
        self.world_size = world_size
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        info = get_worker_info()
        workers = 1 if info is None else info.num_workers
        worker_id = 0 if info is None else info.id
        n_slots = workers * self.world_size
        my_slot = worker_id * self.world_size + self.rank

        rng = random.Random(f"{self.seed}:{self.epoch}")
        shard_ids = list(range(len(self.shards)))
        rng.shuffle(shard_ids)

        if len(shard_ids) >= n_slots:
            base, extra = divmod(len(shard_ids), n_slots)
            start = my_slot * base + min(my_slot, extra)
            stop = start + base + (1 if my_slot < extra else 0)
            for j in shard_ids[start:stop]:
                records = list(self.shards[j])
                random.Random(f"{self.seed}:{self.epoch}:{j}").shuffle(records)
                yield from records
        else:
            everything = [r for j in shard_ids for r in self.shards[j]]
            mine = everything[my_slot::n_slots]
            rng.shuffle(mine)
            yield from mine
