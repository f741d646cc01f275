"""Checks for label_smoothing_cross_entropy(logits, target, epsilon, ignore_index, reduction)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch.nn.functional as F
from hypothesis import example, given

from _label_smoothing_ce_helpers import (
    DEFAULT_IGNORE_INDEX,
    Case,
    check,
    dtypes,
    epsilons,
    extra_dims,
    ignore_indices,
    ignored_shares,
    reductions,
    sizes_C,
    sizes_N,
)
from grader.judge import candidate_raises, expect_close, expect_tensor, seeds

# ---------------------------------------------------------------------- visible


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "With epsilon = 0 this is plain cross-entropy: the mean over positions of "
    "-log_softmax(logits)[target], the softmax taken over dim 1 (the classes)."
)
@given(N=sizes_N, C=sizes_C, seed=seeds())
@example(N=3, C=4, seed=0)
def test_plain_cross_entropy(sandbox, N, C, seed):
    """epsilon = 0 on (N, C): plain cross-entropy, mean over the batch"""
    check(sandbox, Case(N=N, C=C, seed=seed))
    logits, target = Case(N=2, C=3, seed=seed).tensors()
    got = expect_tensor(sandbox.call("ce_defaults", logits, target), shape=(), dtype=logits.dtype,
                        name="label_smoothing_cross_entropy(logits, target) with the defaults")
    expect_close(got, F.cross_entropy(logits, target), "the loss with the default arguments")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "epsilon is spread over ALL C classes: every class gets epsilon / C and the true class "
    "gets 1 - epsilon on top, so the smoothed target sums to 1."
)
@given(N=sizes_N, C=sizes_C, epsilon=epsilons, seed=seeds())
@example(N=3, C=4, epsilon=0.3, seed=0)
@example(N=2, C=2, epsilon=1.0, seed=1)
def test_smoothing(sandbox, N, C, epsilon, seed):
    """epsilon > 0 on (N, C): the smoothed target puts epsilon / C on every class"""
    check(sandbox, Case(N=N, C=C, epsilon=epsilon, seed=seed))


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "'none' returns one loss per position (shaped like target), 'sum' adds them up, "
    "'mean' divides that sum by the number of positions."
)
def test_reductions(sandbox):
    """reduction 'none', 'sum' and 'mean' on (N, C)"""
    for reduction in ("none", "sum", "mean"):
        for epsilon in (0.0, 0.2):
            check(sandbox, Case(N=5, C=3, epsilon=epsilon, reduction=reduction, seed=3))


# ----------------------------------------------------------------------- hidden


@pytest.mark.points(3)
@given(N=sizes_N, C=sizes_C, epsilon=epsilons, ignore_index=ignore_indices, ignored=ignored_shares,
       reduction=reductions, seed=seeds())
@example(N=6, C=4, epsilon=0.2, ignore_index=-100, ignored=0.5, reduction="mean", seed=5)
@example(N=6, C=4, epsilon=0.2, ignore_index=-100, ignored=0.5, reduction="sum", seed=5)
@example(N=6, C=4, epsilon=0.2, ignore_index=-100, ignored=0.5, reduction="none", seed=5)
@example(N=6, C=3, epsilon=0.4, ignore_index=0, ignored=0.0, reduction="mean", seed=6)
def test_ignore_index(sandbox, N, C, epsilon, ignore_index, ignored, reduction, seed):
    """Ignored positions (ignore_index defaults to -100): loss 0, nothing in the sum, out of the mean's denominator"""
    case = Case(N=N, C=C, epsilon=epsilon, ignore_index=ignore_index, ignored=ignored, reduction=reduction, seed=seed)
    check(sandbox, case)
    if ignore_index == DEFAULT_IGNORE_INDEX:  # the signature's default: the same case with ignore_index left out
        check(sandbox, replace(case, pass_ignore_index=False))


@pytest.mark.points(3)
@given(N=sizes_N, C=sizes_C, extra=extra_dims, epsilon=epsilons, ignored=ignored_shares,
       reduction=reductions, seed=seeds())
@example(N=2, C=3, extra=(4,), epsilon=0.1, ignored=0.0, reduction="mean", seed=0)
@example(N=2, C=4, extra=(3, 2), epsilon=0.3, ignored=0.25, reduction="none", seed=1)
@example(N=3, C=3, extra=(2, 2), epsilon=0.2, ignored=0.5, reduction="mean", seed=2)  # ignored positions in d1, d2
def test_extra_dimensions(sandbox, N, C, extra, epsilon, ignored, reduction, seed):
    """(N, C, d1, ...) logits with (N, d1, ...) targets: the class axis is dim 1"""
    check(sandbox, Case(N=N, C=C, extra=extra, epsilon=epsilon, ignored=ignored, reduction=reduction,
                        seed=seed))


@pytest.mark.points(3)
@given(N=sizes_N, C=sizes_C, extra=extra_dims | extra_dims.map(lambda _: ()), epsilon=epsilons,
       ignored=ignored_shares, reduction=reductions, dtype=dtypes, seed=seeds())
@example(N=4, C=3, extra=(), epsilon=0.25, ignored=0.5, reduction="mean", dtype="float32", seed=2)
@example(N=3, C=5, extra=(2,), epsilon=0.5, ignored=0.25, reduction="none", dtype="float64", seed=3)
def test_gradients(sandbox, N, C, extra, epsilon, ignored, reduction, dtype, seed):
    """Gradients w.r.t. logits match F.cross_entropy's (float32 and float64)"""
    check(sandbox, Case(N=N, C=C, extra=extra, epsilon=epsilon, ignored=ignored, reduction=reduction,
                        dtype=dtype, seed=seed), with_grad=True)


@pytest.mark.points(2)
def test_huge_logits_stay_finite(sandbox):
    """Logits of magnitude 1e4 (float32) give finite, correct losses and gradients"""
    for epsilon in (0.0, 0.1):
        for reduction in ("mean", "none"):
            check(sandbox, Case(N=4, C=5, epsilon=epsilon, reduction=reduction, dtype="float32",
                                scale=1e4, seed=11), with_grad=True)
    check(sandbox, Case(N=2, C=3, extra=(2,), epsilon=0.2, reduction="sum", dtype="float32", scale=3e4,
                        seed=12), with_grad=True)


@pytest.mark.points(1)
def test_all_ignored(sandbox):
    """Every position ignored: 'mean' gives nan, 'sum' 0, 'none' zeros"""
    for reduction in ("mean", "sum", "none"):
        for epsilon in (0.0, 0.3):
            check(sandbox, Case(N=3, C=4, epsilon=epsilon, ignored=1.0, reduction=reduction, seed=4))
    check(sandbox, Case(N=2, C=3, extra=(2,), epsilon=0.1, ignore_index=-1, ignored=1.0, reduction="mean",
                        seed=5))


@pytest.mark.points(1)
def test_output_dtype(sandbox):
    """The loss has the dtype of logits (float32 or float64) for every reduction"""
    for dtype in ("float32", "float64"):
        for reduction in ("mean", "sum", "none"):
            check(sandbox, Case(N=3, C=4, epsilon=0.1, reduction=reduction, dtype=dtype, seed=7))


@pytest.mark.points(1)
def test_rejects_bad_arguments(sandbox):
    """ValueError naming epsilon outside [0, 1], or reduction not 'mean'/'sum'/'none'"""
    logits, target = Case(N=2, C=3).tensors()
    for epsilon in (-0.1, 1.5, -1e-9):
        with candidate_raises("ValueError", match="epsilon",
                              what=f"label_smoothing_cross_entropy(logits, target, epsilon={epsilon})"):
            sandbox.call("ce", logits, target, epsilon=epsilon)
    for reduction in ("avg", "batchmean", "Mean"):
        with candidate_raises("ValueError", match="reduction",
                              what=f"label_smoothing_cross_entropy(logits, target, 0.1, reduction={reduction!r})"):
            sandbox.call("ce", logits, target, epsilon=0.1, reduction=reduction)
