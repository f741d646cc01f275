"""Example tests for the sharded_stream exercise.
Run: pytest exercises/sharded_stream/test_sharded_stream_example.py

These are examples to read and run while you work, not the grade: the graded checks are
hidden and cover much more (see README.md).
"""

from collections import Counter

import pytest
from torch.utils.data import DataLoader

from sharded_stream import ShardedStream

SHARDS = [list(range(0, 5)), list(range(5, 8)), list(range(8, 12)), list(range(12, 20))]


def one_epoch(world_size, num_workers, epoch, seed=3):
    """Every rank's records for one epoch, as each rank's DataLoader yields them."""
    per_rank = []
    for rank in range(world_size):
        ds = ShardedStream(SHARDS, rank=rank, world_size=world_size, seed=seed)
        ds.set_epoch(epoch)
        per_rank.append(list(DataLoader(ds, batch_size=None, num_workers=num_workers)))
    return per_rank


@pytest.mark.parametrize("num_workers", [0, 2, 3])
def test_every_record_exactly_once_across_ranks_and_workers(num_workers):
    per_rank = one_epoch(2, num_workers, epoch=0)
    seen = Counter(record for records in per_rank for record in records)
    assert seen == Counter(range(20))
    assert all(type(record) is int for records in per_rank for record in records)


def test_each_epoch_its_own_order_and_the_same_epoch_again():
    assert one_epoch(2, 0, epoch=1) == one_epoch(2, 0, epoch=1)
    assert one_epoch(2, 0, epoch=0) != one_epoch(2, 0, epoch=1)


def test_whole_shards_without_workers():
    shard_of = {record: j for j, shard in enumerate(SHARDS) for record in shard}
    for records in one_epoch(2, 0, epoch=0):  # 4 shards, 2 slots: two whole shards each
        shards = Counter(shard_of[r] for r in records)
        assert len(shards) == 2 and all(shards[j] == len(SHARDS[j]) for j in shards)


def test_errors():
    with pytest.raises(ValueError, match="rank"):
        ShardedStream(SHARDS, rank=2, world_size=2)
    with pytest.raises(ValueError, match="shards"):
        ShardedStream([])
