"""Checks for shard_indices(num_samples, rank, world_size, *, shuffle=True, seed=0, epoch=0).

The truth is torch.utils.data.DistributedSampler itself (drop_last=False, after
set_epoch), computed here in the judge. Each call asks the candidate for every
rank's shard at once.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from _ddp_step_helpers import compare_shards, sampler_shards, shard_all
from grader.judge import candidate_raises, seeds

samples = st.integers(1, 40)
worlds = st.integers(1, 8)
epochs = st.integers(0, 50)


def _check(sandbox, n: int, ws: int, settings: list[dict], truths: list[dict]) -> None:
    """Ask for every rank under each keyword-options entry; compare with DistributedSampler under truths."""
    got = shard_all(sandbox, n, ws, settings)
    for options, truth, shards in zip(settings, truths, got):
        compare_shards(n, ws, options, shards, sampler_shards(n, ws, **truth))


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Without shuffling, rank r takes every world_size-th index starting at r (strided, not a "
    "contiguous block), after the list 0..n-1 is padded to a multiple of world_size by repeating "
    "indices from its start."
)
@given(n=samples, ws=worlds)
@example(n=10, ws=4)
@example(n=2, ws=4)
@example(n=1, ws=3)
@example(n=12, ws=3)
def test_shard_without_shuffle(sandbox, n, ws):
    """shard_indices: shuffle=False: strided shards of 0..n-1, padded from the start"""
    _check(sandbox, n, ws, [{"shuffle": False}], [{"shuffle": False}])


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Shuffle with torch.randperm(num_samples, generator=g) where g = torch.Generator() seeded with "
    "seed + epoch; pad and stride the permuted list exactly as without shuffling."
)
@given(n=samples, ws=worlds, seed=seeds(bits=31), epoch=epochs)
@example(n=10, ws=3, seed=0, epoch=0)
@example(n=7, ws=2, seed=42, epoch=3)
def test_shard_with_shuffle(sandbox, n, ws, seed, epoch):
    """shard_indices: shuffle=True equals DistributedSampler for any seed and epoch"""
    options = {"shuffle": True, "seed": seed, "epoch": epoch}
    _check(sandbox, n, ws, [options], [options])


@pytest.mark.points(1)
@given(n=st.integers(2, 40), ws=worlds, seed=seeds(bits=31))
@example(n=16, ws=2, seed=0)
def test_shard_epochs_reshuffle(sandbox, n, ws, seed):
    """shard_indices: each epoch reshuffles (the generator is seeded with seed + epoch)"""
    settings = [{"shuffle": True, "seed": seed, "epoch": epoch} for epoch in (0, 1, 2, 5)]
    _check(sandbox, n, ws, settings, settings)


@pytest.mark.points(1)
@given(ws=st.integers(2, 8), per_rank=st.integers(0, 4), extra=st.integers(1, 7), shuffle=st.booleans(),
       seed=seeds(bits=31))
@example(ws=4, per_rank=0, extra=1, shuffle=False, seed=0)
@example(ws=5, per_rank=1, extra=2, shuffle=True, seed=3)
def test_shard_padding(sandbox, ws, per_rank, extra, shuffle, seed):
    """shard_indices: uneven sizes: every rank gets ceil(n / world_size), padding repeats from the start"""
    n = per_rank * ws + 1 + (extra - 1) % (ws - 1)  # never a multiple of ws; n < ws when per_rank = 0
    options = {"shuffle": shuffle, "seed": seed}
    _check(sandbox, n, ws, [options], [options])


@pytest.mark.points(1)
@given(n=samples, ws=worlds, seed=seeds(bits=31), epoch=epochs)
@example(n=9, ws=2, seed=1, epoch=1)
def test_shard_defaults(sandbox, n, ws, seed, epoch):
    """shard_indices: defaults are shuffle=True, seed=0, epoch=0"""
    settings = [{}, {"seed": seed}, {"epoch": epoch}, {"shuffle": True}]
    truths = [{}, {"seed": seed}, {"epoch": epoch}, {}]
    _check(sandbox, n, ws, settings, truths)


@pytest.mark.points(1)
def test_shard_rejects_bad_arguments(sandbox):
    """shard_indices: ValueError naming the argument for num_samples < 1, world_size < 1, rank out of range"""
    for n in (0, -3):
        with candidate_raises("ValueError", match="num_samples", what=f"shard_indices({n}, 0, 2)"):
            sandbox.call("shard", n, 0, 2)
    # With world_size < 1 no rank is in range either: naming either argument is right.
    for ws in (0, -1):
        with candidate_raises("ValueError", match="world_size|rank", what=f"shard_indices(5, 0, {ws})"):
            sandbox.call("shard", 5, 0, ws)
    for rank, ws in ((2, 2), (5, 3), (-1, 2), (1, 1)):
        with candidate_raises("ValueError", match="rank", what=f"shard_indices(5, {rank}, {ws})"):
            sandbox.call("shard", 5, rank, ws)
