"""Judge-side helpers for the weighted_sharded_sampler checks: the contract's probabilities,
a seeded chi-square goodness-of-fit test, strategies and the checks on one pass.

The chi-square p-value is computed with torch.special.gammaincc (the chi-square
survival function is the regularised upper incomplete gamma Q(df/2, x/2)), in float64.
The file name is exercise-specific so that it never clashes with another exercise's helpers.
"""

from __future__ import annotations

from collections import Counter

import torch
from hypothesis import strategies as st

from grader.judge import expect_bounded, expect_tensor

#: A correct sampler fails a chi-square test with this probability; a wrong one, on ~20k draws, always.
P_MIN = 1e-5
BIG = 20_000

label_values = st.integers(-3, 12)
weight_values = st.sampled_from([0, 0.5, 1, 2, 3])


@st.composite
def labelled(draw, max_len: int = 12):
    """Labels with 2-4 distinct classes, imbalanced on purpose (counts differ), and weights for each."""
    classes = draw(st.lists(label_values, min_size=2, max_size=4, unique=True))
    counts = draw(st.lists(st.integers(1, 4), min_size=len(classes), max_size=len(classes)))
    labels = [c for c, n in zip(classes, counts) for _ in range(n)][:max_len]
    labels = draw(st.permutations(labels))
    present = sorted(set(labels))
    weights = draw(st.lists(weight_values, min_size=len(present), max_size=len(present)))
    if not any(weights):
        weights[0] = 1
    extra = draw(st.sampled_from([[], [[40, 2.0]]]))  # a key absent from labels: ignored
    return list(labels), [[c, w] for c, w in zip(present, weights)] + extra


def probabilities(labels: list[int], class_weights: list | None) -> torch.Tensor:
    """P(i) = w[labels[i]] / count[labels[i]] / Z, as float64."""
    counts = Counter(labels)
    w = {c: 1.0 for c in counts} if class_weights is None else {int(c): float(x) for c, x in class_weights}
    p = torch.tensor([w[y] / counts[y] for y in labels], dtype=torch.float64)
    return p / p.sum()


def describe(labels, kwargs) -> str:
    shown = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return f"WeightedShardedSampler({labels!r}{', ' if shown else ''}{shown})"


def indices(one_pass: dict, n: int, expected_len: int, what: str) -> torch.Tensor:
    """The pass's indices, proven to be expected_len Python ints in [0, n)."""
    if one_pass["types"] not in ([], ["int"]):
        raise AssertionError(f"{what}: __iter__ must yield Python ints, it yielded {', '.join(one_pass['types'])}")
    got = expect_tensor(one_pass["indices"], dtype=torch.int64, name=f"{what}: the indices")
    if got.numel() != expected_len:
        raise AssertionError(f"{what}: yielded {got.numel()} indices, expected {expected_len}")
    if got.numel() and (int(got.min()) < 0 or int(got.max()) >= n):
        raise AssertionError(f"{what}: yielded an index outside [0, {n}): {got.min().item()}..{got.max().item()}")
    return got


def chi_square(draw: torch.Tensor, p: torch.Tensor, what: str) -> None:
    """Goodness of fit of the per-index counts of draw with P; indices of probability 0 never drawn."""
    counts = torch.bincount(draw, minlength=p.numel()).to(torch.float64)
    zero = (p == 0) & (counts > 0)
    if zero.any():
        i = int(zero.nonzero()[0])
        raise AssertionError(f"{what}: index {i} has probability 0 (its class has weight 0) but was drawn "
                             f"{int(counts[i])} times")
    live = p > 0
    expected = p[live] * draw.numel()
    stat = float(((counts[live] - expected) ** 2 / expected).sum())
    df = int(live.sum()) - 1
    if df == 0:
        return
    pvalue = float(torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64),
                                           torch.tensor(stat / 2, dtype=torch.float64)))
    share = (counts / draw.numel()).tolist()
    expect_bounded(pvalue, at_least=P_MIN,
                   name=f"{what}: the chi-square p-value of the frequencies of the {draw.numel()} indices drawn",
                   note=f"they must follow P(i) = w[label] / count[label] / Z; chi-square {stat:.1f} on {df} df; "
                        f"observed {[round(x, 3) for x in share]}, expected {[round(x, 3) for x in p.tolist()]}")
