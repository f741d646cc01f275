"""Checks for WeightedShardedSampler(labels, class_weights=None, num_replicas=1, rank=0, seed=0, num_samples=None)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _weighted_sharded_sampler_helpers import BIG, chi_square, describe, indices, labelled, probabilities
from grader.judge import CandidateError, candidate_raises, seeds

IMBALANCED = [0, 0, 0, 0, 0, 0, 1, 1, 2]
#: The signature's default seed, as the README states it.
DEFAULT_SEED = 0


def _passes(sandbox, labels, kwargs, epochs=(None,)):
    return sandbox.call("draw_many", labels, [{"kwargs": kwargs, "epochs": list(epochs)}])[0]


# -------------------------------------------------------------------- single replica


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint("len(sampler) is num_samples // num_replicas (num_samples defaults to len(labels)); "
                  "iterating yields exactly that many Python ints in [0, len(labels)).")
def test_length(sandbox):
    """len = num_samples // num_replicas; iterating yields that many ints in [0, N)"""
    cases = [({}, 9), ({"num_samples": 5}, 5), ({"num_replicas": 2, "rank": 1}, 4),
             ({"num_replicas": 3, "rank": 2, "num_samples": 11}, 3), ({"num_samples": 30}, 30)]
    for kwargs, expected in cases:
        result = _passes(sandbox, IMBALANCED, kwargs)
        what = describe(IMBALANCED, kwargs)
        if result["len"] != expected:
            raise AssertionError(f"len({what}) is {result['len']}, expected {expected}")
        indices(result["passes"][0], len(IMBALANCED), expected, what)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Draw with a torch.Generator seeded from (seed, epoch) at the start of every "
                  "iteration, not with the global RNG and not with a generator that keeps running.")
@given(seed=seeds(bits=31))
@example(seed=DEFAULT_SEED)
def test_deterministic(sandbox, seed):
    """Deterministic: two instances with the same arguments (seed left out = seed=0), and two passes over one, agree"""
    kwargs = {"seed": seed, "num_samples": 40}
    specs = [{"kwargs": kwargs, "epochs": [None, None]}, {"kwargs": kwargs, "epochs": [None]}]
    if seed == DEFAULT_SEED:  # the signature's default: leaving seed out passes the same argument
        specs.append({"kwargs": {"num_samples": 40}, "epochs": [None]})
    a, b, *default = sandbox.call("draw_many", IMBALANCED, specs)
    what = describe(IMBALANCED, kwargs)
    first, second, other = (indices(p, 9, 40, what) for p in a["passes"] + b["passes"])
    if not torch.equal(first, second):
        raise AssertionError(f"{what}: iterating the same instance twice gave {first.tolist()} then "
                             f"{second.tolist()}; the same (seed, epoch) must give the same draw")
    if not torch.equal(first, other):
        raise AssertionError(f"two instances of {what} gave {first.tolist()} and {other.tolist()}")
    for result in default:
        unseeded = describe(IMBALANCED, specs[-1]["kwargs"])
        got = indices(result["passes"][0], 9, 40, unseeded)
        if not torch.equal(first, got):
            raise AssertionError(f"{unseeded} gave {got.tolist()} and {what} gave {first.tolist()}: seed defaults "
                                 f"to {DEFAULT_SEED}, so leaving it out must give the same draw")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Balanced by default: each class present gets the same share, spread equally over its "
                  "indices, so an index's weight is 1 / (the size of its class).")
def test_balanced_by_default(sandbox):
    """Default weights balance the classes: P(i) = 1 / (K * size of the class of i)"""
    for labels, seed in ((IMBALANCED, 0), ([5, 5, 5, 5, 5, 5, 5, -1, 3, 3], 11)):
        kwargs = {"seed": seed, "num_samples": BIG}
        draw = indices(_passes(sandbox, labels, kwargs)["passes"][0], len(labels), BIG, describe(labels, kwargs))
        chi_square(draw, probabilities(labels, None), describe(labels, kwargs))


# --------------------------------------------------------------------------- weights


@pytest.mark.points(3)
@given(case=labelled(), seed=seeds(bits=31))
@example(case=([0, 0, 0, 1, 2, 2], [[0, 1], [1, 1], [2, 2]]), seed=5)
@example(case=([4, 4, 4, 4, 9, -2, -2], [[4, 0], [9, 3], [-2, 0.5], [40, 2.0]]), seed=6)
def test_follows_class_weights(sandbox, case, seed):
    """Frequencies follow class_weights: P(i) = w(c) / count(c) / Z; weight 0 is never drawn"""
    labels, weights = case
    kwargs = {"class_weights": weights, "seed": seed, "num_samples": BIG}
    draw = indices(_passes(sandbox, labels, kwargs)["passes"][0], len(labels), BIG, describe(labels, kwargs))
    chi_square(draw, probabilities(labels, weights), describe(labels, kwargs))


@pytest.mark.points(1)
def test_with_replacement(sandbox):
    """Draws with replacement: num_samples may exceed len(labels), indices repeat"""
    labels = [0, 1, 1, 2]
    kwargs = {"num_samples": 50, "seed": 3}
    draw = indices(_passes(sandbox, labels, kwargs)["passes"][0], 4, 50, describe(labels, kwargs))
    if int(torch.bincount(draw, minlength=4).max()) < 2:
        raise AssertionError(f"{describe(labels, kwargs)} must repeat indices (50 draws from 4)")


# -------------------------------------------------------------------------- sharding


@pytest.mark.points(3)
@given(num_replicas=st.integers(2, 4), extra=st.integers(0, 3), per=st.integers(1, 12), seed=seeds(bits=31),
       case=labelled())
@example(num_replicas=3, extra=2, per=5, seed=1, case=(IMBALANCED, [[0, 1], [1, 1], [2, 1]]))
def test_shards_of_one_global_draw(sandbox, num_replicas, extra, per, seed, case):
    """Ranks: equal counts, rank r gets positions r, r + R, ... of one global draw (uneven num_samples too)"""
    labels, weights = case
    extra = extra % num_replicas
    num_samples = per * num_replicas + extra
    base = {"class_weights": weights, "seed": seed}
    specs = [{"kwargs": {**base, "num_replicas": num_replicas, "rank": r, "num_samples": num_samples}}
             for r in range(num_replicas)]
    whole = {**base, "num_samples": per * num_replicas}
    specs.append({"kwargs": whole})
    *ranks, glob = sandbox.call("draw_many", labels, specs)
    global_draw = indices(glob["passes"][0], len(labels), per * num_replicas, describe(labels, whole))
    for r, result in enumerate(ranks):
        what = describe(labels, specs[r]["kwargs"])
        if result["len"] != per:
            raise AssertionError(f"len({what}) is {result['len']}, expected {num_samples} // {num_replicas} = {per}")
        got = indices(result["passes"][0], len(labels), per, what)
        want = global_draw[r::num_replicas]
        if not torch.equal(got, want):
            raise AssertionError(
                f"{what} yielded {got.tolist()}; expected positions {r}, {r} + {num_replicas}, ... of the "
                f"global draw {global_draw.tolist()} (what {describe(labels, whole)} yields), i.e. {want.tolist()}"
            )


# ---------------------------------------------------------------------------- epochs


@pytest.mark.points(2)
@given(seed=seeds(bits=31))
def test_set_epoch(sandbox, seed):
    """set_epoch changes the draw; the same epoch gives the same draw again, on any instance"""
    kwargs = {"seed": seed, "num_samples": 30}
    a, b = sandbox.call("draw_many", IMBALANCED, [{"kwargs": kwargs, "epochs": [None, 1, 2, 1, 0]},
                                                  {"kwargs": kwargs, "epochs": [2]}])
    what = describe(IMBALANCED, kwargs)
    e0, e1, e2, e1_again, e0_again, other_e2 = (indices(p, 9, 30, what) for p in a["passes"] + b["passes"])
    for x, y, name in ((e0, e1, "0 and 1"), (e1, e2, "1 and 2"), (e0, e2, "0 and 2")):
        if torch.equal(x, y):
            raise AssertionError(f"{what}: epochs {name} gave the same draw {x.tolist()}; set_epoch must change it")
    if not (torch.equal(e1, e1_again) and torch.equal(e0, e0_again)):
        raise AssertionError(f"{what}: set_epoch(1) / set_epoch(0) again did not reproduce that epoch's draw")
    if not torch.equal(e2, other_e2):
        raise AssertionError(f"{what}: set_epoch(2) on two instances gave {e2.tolist()} and {other_e2.tolist()}")


# ------------------------------------------------------------------------------ RNG


@pytest.mark.points(2)
def test_private_generator(sandbox):
    """Uses its own generator: the global torch RNG neither changes the draw nor is changed"""
    kwargs = {"seed": 7, "num_samples": 40, "num_replicas": 2, "rank": 1}
    result = sandbox.call("global_rng", IMBALANCED, kwargs)
    what = describe(IMBALANCED, kwargs)
    first, second = indices(result["first"], 9, 20, what), indices(result["second"], 9, 20, what)
    if not torch.equal(first, second):
        raise AssertionError(f"{what} gave {first.tolist()} and {second.tolist()} after different "
                             f"torch.manual_seed calls: the draw must not depend on the global RNG")
    if not torch.equal(result["before"], result["after"]):
        raise AssertionError(f"building and iterating {what} changed the global torch RNG state")


# ---------------------------------------------------------------------------- errors


@pytest.mark.points(2)
def test_rejects_bad_arguments(sandbox):
    """ValueError naming the problem: rank, num_replicas, num_samples, weights, a label without weight"""
    ok = [[0, 1], [1, 1], [7, 1]]
    bad = [
        ([0, 1], {"num_replicas": 2, "rank": 2}, "rank"),
        ([0, 1], {"num_replicas": 2, "rank": -1}, "rank"),
        ([0, 1], {"num_replicas": 0}, "num_replicas"),
        ([0, 1], {"num_replicas": 3, "rank": 0, "num_samples": 2}, "num_samples"),
        ([], {}, "labels"),
        ([0, 1, 7], {"class_weights": [[0, 1], [1, -0.5], [7, 1]]}, "weight"),
        ([0, 1, 7], {"class_weights": [[0, 1], [1, float("nan")], [7, 1]]}, "weight"),
        ([0, 1, 7], {"class_weights": ok + [[3, float("inf")]]}, "weight"),
        ([0, 1, 7], {"class_weights": [[0, 0], [1, 0], [7, 0]]}, "weight"),
        ([0, 1, 7], {"class_weights": [[0, 1], [1, 1]]}, r"\b7\b"),
    ]
    for labels, kwargs, name in bad:
        args = "".join(f", {k}={v!r}" for k, v in kwargs.items())
        with candidate_raises("ValueError", match=name, what=f"WeightedShardedSampler({labels}{args})",
                              otherwise=lambda labels=labels, kwargs=kwargs: _drawn_without_weight(sandbox, labels,
                                                                                                   kwargs)):
            sandbox.call("init", labels, **kwargs)


def _drawn_without_weight(sandbox, labels: list[int], kwargs: dict) -> str | None:
    """What a sampler that accepted a label without weight does with it (how often one pass draws it), or None."""
    weighted = {c for c, _ in kwargs.get("class_weights") or []}
    missing = {i for i, c in enumerate(labels) if c not in weighted}
    if not missing or not kwargs.get("class_weights"):
        return None
    n, what = 300, describe(labels, {**kwargs, "num_samples": 300})
    try:
        one_pass = _passes(sandbox, labels, {**kwargs, "num_samples": n})["passes"][0]
        drawn = indices(one_pass, len(labels), n, what)
    except (AssertionError, CandidateError):  # it cannot draw either: that it accepted the label is all there is
        return None
    hits = sum(1 for i in drawn.tolist() if i in missing)
    return f"a pass of {n} draws drew the labels without a weight {hits} times"
