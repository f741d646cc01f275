"""A sharded, shuffled stream for ranks and DataLoader workers: implement the class below. See README.md."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import torch


class ShardedStream(torch.utils.data.IterableDataset):
    """Streams the records of ``shards`` so that, in every epoch, the world_size * num_workers
    slots (one per (rank, DataLoader worker) pair; num_workers and the worker id come from
    torch.utils.data.get_worker_info() inside __iter__, None meaning 1 worker, id 0) yield every
    record exactly once.

    - len(shards) >= S slots: whole shards, each read by one slot; each slot reads
      len(shards) // S or len(shards) // S + 1 shards.
    - len(shards) < S: records dealt one by one; each slot yields T // S or T // S + 1 of the
      T records.
    - Uneven totals between ranks are allowed: never pad or drop records.
    - Each epoch the shard order and the records are shuffled with your own generator, seeded
      from (seed, epoch): the same on every rank and worker, never the global RNG.
    """

    def __init__(self, shards: Sequence[Sequence[int]], *, rank: int = 0, world_size: int = 1,
                 seed: int = 0):
        """ValueError (naming what is wrong) for: empty shards ("shards"), world_size < 1
        ("world_size"), rank outside [0, world_size) ("rank")."""
        raise NotImplementedError("ShardedStream.__init__")

    def set_epoch(self, epoch: int) -> None:
        """The next iteration (a DataLoader copies the dataset into its workers when a loop
        starts) uses this epoch; the epoch is 0 until set_epoch is called."""
        raise NotImplementedError("ShardedStream.set_epoch")

    def __iter__(self) -> Iterator[int]:
        """This (rank, worker) slot's records for the current epoch, shuffled, as Python ints."""
        raise NotImplementedError("ShardedStream.__iter__")
