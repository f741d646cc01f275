"""Checks for ShardedStream(shards, *, rank=0, world_size=1, seed=0): set_epoch, __iter__."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from _sharded_stream_helpers import (describe, expect_exactly_once, expect_split_records, expect_whole_shards,
                                     make_shards, rank_sequences, shard_sizes, slots)
from grader.judge import candidate_raises, seeds

#: The signature's default seed, as the README states it.
DEFAULT_SEED = 0


def _stream(sandbox, sizes, world_size, num_workers, epochs, *, seed=None, rng_salt=0):
    """The probe's passes, read back into {(rank, worker): records} per pass."""
    passes = sandbox.call("stream", make_shards(sizes), world_size, num_workers, list(epochs), seed=seed,
                          rng_salt=rng_salt)
    if not isinstance(passes, list) or len(passes) != len(epochs):
        raise AssertionError(f"the probe returned {type(passes).__name__}, not {len(epochs)} passes")
    return [slots(p, world_size, num_workers, describe(sizes, world_size, num_workers, seed=seed, epoch=e))
            for p, e in zip(passes, epochs)]


# ------------------------------------------------------------------------ one process, ranks


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("With one rank and no DataLoader workers there is one slot: it yields every record of every "
                  "shard once, as the Python int it is (not a tensor, not a position).")
def test_one_slot_yields_every_record(sandbox):
    """One rank, no workers: every record of every shard exactly once, as Python ints"""
    for sizes in ([5, 3, 4], [7], [4, 0, 6, 0], [1, 1, 1, 1, 1]):
        (got,) = _stream(sandbox, sizes, 1, 0, [None], seed=3)
        expect_exactly_once(got, make_shards(sizes), describe(sizes, 1, 0, seed=3))


@pytest.mark.points(3)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Every rank builds its own instance with rank=r: the ranks must agree on one shard permutation "
                  "(the same seeded generator everywhere) and each take a different part of it.")
@given(sizes=shard_sizes, world_size=st.integers(2, 4), seed=seeds(bits=31))
@example(sizes=[3, 3, 3, 3, 3, 3, 3], world_size=3, seed=0)
@example(sizes=[5, 2, 8], world_size=2, seed=11)
def test_ranks_share_the_records(sandbox, sizes, world_size, seed):
    """Several ranks, no workers: together they yield every record exactly once"""
    (got,) = _stream(sandbox, sizes, world_size, 0, [None], seed=seed)
    expect_exactly_once(got, make_shards(sizes), describe(sizes, world_size, 0, seed=seed))


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Shuffle with your own generator seeded from (seed, epoch) at the start of every iteration, "
                  "never with the global RNG and never with a generator that keeps running between passes.")
@given(seed=seeds(bits=31))
@example(seed=DEFAULT_SEED)
def test_deterministic(sandbox, seed):
    """Deterministic: two instances, and two passes over one, give the same order (seed left out = seed=0)"""
    sizes, world_size = [6, 4, 5, 7, 3, 5], 2
    what = describe(sizes, world_size, 0, seed=seed)
    first, again = _stream(sandbox, sizes, world_size, 0, [None, None], seed=seed, rng_salt=1)
    (other,) = _stream(sandbox, sizes, world_size, 0, [None], seed=seed, rng_salt=2)
    for name, run in (("iterating the same instances a second time", again),
                      ("a second set of instances, built with the same arguments", other)):
        if run != first:
            raise AssertionError(f"{what}: {name} gave {rank_sequences(run, world_size)} after "
                                 f"{rank_sequences(first, world_size)}; the same (seed, epoch) must give the same "
                                 f"order, whatever the global RNG holds")
    if seed == DEFAULT_SEED:  # the signature's default: leaving seed out passes the same argument
        (unseeded,) = _stream(sandbox, sizes, world_size, 0, [None])
        if unseeded != first:
            raise AssertionError(f"{describe(sizes, world_size, 0)} gave {rank_sequences(unseeded, world_size)} and "
                                 f"{what} gave {rank_sequences(first, world_size)}: seed defaults to "
                                 f"{DEFAULT_SEED}, so leaving it out must give the same order")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Keep the epoch as an attribute that set_epoch sets and __iter__ reads (never advanced by "
                  "__iter__ itself); seed the shuffle from (seed, epoch), so each epoch has its own order.")
@given(seed=seeds(bits=31))
@example(seed=DEFAULT_SEED)
def test_set_epoch(sandbox, seed):
    """set_epoch: epochs differ, the same epoch repeats, epoch 0 until set_epoch is called"""
    sizes, world_size = [6, 4, 5, 7, 3, 5], 2
    unset, e1, e2, e0, e1_again = _stream(sandbox, sizes, world_size, 0, [None, 1, 2, 0, 1], seed=seed)
    (fresh_e2,) = _stream(sandbox, sizes, world_size, 0, [2], seed=seed, rng_salt=3)
    what = describe(sizes, world_size, 0, seed=seed)
    for x, y, name in ((e0, e1, "0 and 1"), (e1, e2, "1 and 2"), (e0, e2, "0 and 2")):
        expect_exactly_once(x, make_shards(sizes), what)
        if x == y:
            raise AssertionError(f"{what}: epochs {name} gave the same order {rank_sequences(x, world_size)}; "
                                 f"set_epoch must change it")
    for x, y, name in ((unset, e0, "no set_epoch call and set_epoch(0)"),
                       (e1, e1_again, "epoch 1 and set_epoch(1) again after epoch 0"),
                       (e2, fresh_e2, "epoch 2 on two sets of instances")):
        if x != y:
            raise AssertionError(f"{what}: {name} gave {rank_sequences(x, world_size)} and "
                                 f"{rank_sequences(y, world_size)}; the same epoch must give the same order")


# ---------------------------------------------------------------------------- DataLoader workers

#: (shard sizes, world_size, num_workers): whole shards (len(shards) >= S), one worker count each.
WORKER_CASES = [([4, 6, 2, 5, 3, 7], 1, 2), ([3, 5, 4, 6, 2, 4, 5], 2, 3), ([2, 8, 5, 5, 1, 6, 3, 4, 2], 2, 2)]


@pytest.mark.points(3)
def test_workers_share_the_records(sandbox):
    """With 2 and 3 DataLoader workers per rank, every record exactly once across ranks and workers"""
    for sizes, world_size, num_workers in WORKER_CASES:
        for epoch in (0, 1):
            got = _stream(sandbox, sizes, world_size, num_workers, [epoch], seed=5)[0]
            expect_exactly_once(got, make_shards(sizes), describe(sizes, world_size, num_workers, seed=5,
                                                                  epoch=epoch))


@pytest.mark.points(2)
def test_workers_deterministic_and_epochs(sandbox):
    """With workers: the same epoch gives the same order in every slot, whatever the RNG; epochs differ"""
    sizes, world_size, num_workers, seed = [6, 4, 5, 7, 3, 5, 6, 4], 2, 2, 9
    e0, e1 = _stream(sandbox, sizes, world_size, num_workers, [0, 1], seed=seed, rng_salt=4)
    (again,) = _stream(sandbox, sizes, world_size, num_workers, [0], seed=seed, rng_salt=5)
    for epoch, got in ((0, e0), (1, e1)):
        expect_exactly_once(got, make_shards(sizes), describe(sizes, world_size, num_workers, seed=seed, epoch=epoch))
    what = describe(sizes, world_size, num_workers, seed=seed)
    if again != e0:
        raise AssertionError(f"{what}: epoch 0 on two sets of instances gave different orders per (rank, worker): "
                             f"{e0} and {again}; every slot must draw the same order from (seed, epoch), not from "
                             f"the workers' global RNG")
    if e1 == e0:
        raise AssertionError(f"{what}: epochs 0 and 1 gave the same order per (rank, worker) {e0}; set_epoch, "
                             f"called before the loader starts, must reach the workers' copies")


# ----------------------------------------------------------------------- how the slots share shards


@pytest.mark.points(2)
def test_whole_shards(sandbox):
    """At least as many shards as slots: each shard read whole by one slot; shard counts differ by at most one"""
    cases = [([3, 5, 2, 6, 4, 1, 3], 3, 0), ([4, 4, 0, 6, 2], 2, 0)] + WORKER_CASES[1:] + [([5, 9, 3], 1, 3)]
    for sizes, world_size, num_workers in cases:
        (got,) = _stream(sandbox, sizes, world_size, num_workers, [1], seed=7)
        expect_whole_shards(got, make_shards(sizes), describe(sizes, world_size, num_workers, seed=7, epoch=1))


@pytest.mark.points(2)
def test_fewer_shards_than_slots(sandbox):
    """Fewer shards than slots: records dealt one by one, every slot yields T // S or T // S + 1"""
    cases = [([5, 6], 3, 0), ([3], 4, 0), ([4, 7, 0, 5], 2, 3), ([9], 1, 2)]
    for sizes, world_size, num_workers in cases:
        (got,) = _stream(sandbox, sizes, world_size, num_workers, [2], seed=13)
        expect_split_records(got, make_shards(sizes), describe(sizes, world_size, num_workers, seed=13, epoch=2))


@pytest.mark.points(1)
def test_uneven_totals_not_padded(sandbox):
    """Uneven shards: ranks yield different counts; nothing is padded or dropped to even them out"""
    for sizes, world_size in (([10, 1], 2), ([9, 2, 0], 3), ([12, 1, 1, 3], 2)):
        for epoch in (0, 1):
            (got,) = _stream(sandbox, sizes, world_size, 0, [epoch], seed=17)
            expect_exactly_once(got, make_shards(sizes), describe(sizes, world_size, 0, seed=17, epoch=epoch)
                                + " (ranks may yield different counts: no padding, no dropping)")


# -------------------------------------------------------------------------------------- shuffling


@pytest.mark.points(1)
def test_shard_order_shuffled_per_epoch(sandbox):
    """The shard order is reshuffled every epoch: which shards a rank reads changes"""
    sizes, world_size = [3] * 8, 2
    passes = _stream(sandbox, sizes, world_size, 0, [0, 1, 2, 3], seed=21)
    owner = {record: j for j, shard in enumerate(make_shards(sizes)) for record in shard}
    read = []
    for epoch, got in enumerate(passes):
        expect_exactly_once(got, make_shards(sizes), describe(sizes, world_size, 0, seed=21, epoch=epoch))
        read.append(sorted({owner[record] for record in got[(0, 0)]}))
    if all(shards == read[0] for shards in read):
        raise AssertionError(f"{describe(sizes, world_size, 0, seed=21)}: rank 0 read shards {read[0]} in each of "
                             f"epochs 0 to 3; shuffle the shard order every epoch before dealing shards to slots")


@pytest.mark.points(1)
def test_records_shuffled(sandbox):
    """Records are shuffled too: one shard's records come in a new order each epoch, not as stored"""
    sizes = [24]
    stored = make_shards(sizes)[0]
    e0, e1 = _stream(sandbox, sizes, 1, 0, [0, 1], seed=23)
    what = describe(sizes, 1, 0, seed=23)
    orders = []
    for epoch, got in enumerate((e0, e1)):
        expect_exactly_once(got, [stored], f"{what}, epoch {epoch}")
        orders.append(got[(0, 0)])
        if got[(0, 0)] == stored:
            raise AssertionError(f"{what}, epoch {epoch}: the records came in their stored order; shuffle the "
                                 f"records, not only the shards")
    if orders[0] == orders[1]:
        raise AssertionError(f"{what}: epochs 0 and 1 gave the same order {orders[0]}")


@pytest.mark.points(1)
def test_defaults(sandbox):
    """ShardedStream(shards) alone is rank 0 of world_size 1 with seed 0, the signature's defaults"""
    sizes = [5, 3, 4]
    what = f"ShardedStream(shards) with every argument left to its default, shard sizes {sizes}"
    passes = sandbox.call("stream", make_shards(sizes), None, 0, [None])
    if not isinstance(passes, list) or len(passes) != 1:
        raise AssertionError(f"the probe returned {type(passes).__name__}, not 1 pass")
    got = slots(passes[0], 1, 0, what)
    expect_exactly_once(got, make_shards(sizes), what)
    (explicit,) = _stream(sandbox, sizes, 1, 0, [None], seed=DEFAULT_SEED)
    if got != explicit:
        raise AssertionError(f"{what}: yielded {got[(0, 0)]}, but ShardedStream(shards, rank=0, world_size=1, "
                             f"seed=0) yields {explicit[(0, 0)]}: the defaults must be rank=0, world_size=1, seed=0")


# ------------------------------------------------------------------------------------------ errors


@pytest.mark.points(1)
def test_rejects_bad_arguments(sandbox):
    """ValueError naming the problem: no shards, world_size < 1, rank outside [0, world_size)"""
    shards = make_shards([2, 3])
    bad = [
        ([], {}, "shards"),
        (shards, {"world_size": 0}, "world_size"),
        (shards, {"world_size": 2, "rank": 2}, "rank"),
        (shards, {"world_size": 2, "rank": -1}, "rank"),
    ]
    for given_shards, kwargs, name in bad:
        with candidate_raises("ValueError", match=name, what=f"ShardedStream({given_shards!r}, **{kwargs!r})"):
            sandbox.call("init", given_shards, **kwargs)
