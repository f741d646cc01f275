"""Example tests for the weighted_sharded_sampler exercise.
Run: pytest exercises/weighted_sharded_sampler/test_weighted_sharded_sampler_example.py

These are examples to read and run while you work, not the grade: the graded checks are
hidden and cover much more (see README.md), the frequencies with a chi-square test among them.
"""

import pytest
import torch

from sampler import WeightedShardedSampler

LABELS = [0, 0, 0, 0, 0, 0, 1, 1, 2]


def test_ranks_split_one_global_draw():
    whole = list(WeightedShardedSampler(LABELS, seed=3, num_samples=8))  # 9 // 2 * 2 = 8
    for rank in range(2):
        sampler = WeightedShardedSampler(LABELS, num_replicas=2, rank=rank, seed=3, num_samples=9)
        mine = list(sampler)
        assert len(sampler) == len(mine) == 4
        assert all(type(i) is int and 0 <= i < 9 for i in mine)
        assert mine == whole[rank::2]


def test_epochs_and_determinism():
    sampler = WeightedShardedSampler(LABELS, seed=1, num_samples=50)
    first = list(sampler)
    assert list(sampler) == first
    sampler.set_epoch(1)
    assert list(sampler) != first


def test_balanced_by_default_roughly():
    drawn = torch.tensor(list(WeightedShardedSampler(LABELS, num_samples=9000)))
    classes = torch.tensor(LABELS)[drawn]
    share = torch.bincount(classes, minlength=3) / 9000
    assert torch.allclose(share, torch.full((3,), 1 / 3), atol=0.03)


def test_errors():
    with pytest.raises(ValueError, match="rank"):
        WeightedShardedSampler(LABELS, num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="7"):
        WeightedShardedSampler([0, 7], class_weights={0: 1.0})
