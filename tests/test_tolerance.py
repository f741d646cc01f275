"""Tolerances per dtype: an exercise names them once, each comparison picks by the dtype the judge expects."""

import pytest
import torch

from grader.judge import EXACT, Tolerance, Tolerances, expect_close, expect_scalar


def test_the_tolerance_follows_the_expected_dtype():
    tol = Tolerances(float32=Tolerance(atol=1e-4, rtol=0.0), float64=Tolerance(atol=1e-12, rtol=0.0))
    assert tol.for_dtype(torch.float32) == Tolerance(atol=1e-4, rtol=0.0)
    assert tol.for_dtype(torch.float64) == Tolerance(atol=1e-12, rtol=0.0)
    assert tol.for_dtype(torch.int64) is EXACT and tol.for_dtype(torch.bool) is EXACT
    with pytest.raises(ValueError, match="no tolerance for torch.bfloat16"):
        tol.for_dtype(torch.bfloat16)


def test_a_float64_result_is_held_to_float64_precision():
    """A float64 answer rounded through float32 passes float32's tolerance and fails float64's."""
    want = torch.linspace(0, 1, 7, dtype=torch.float64) / 3
    rounded = want.float().double()
    expect_close(want.float(), want.float(), "out", tol=Tolerances())
    with pytest.raises(AssertionError, match="out: "):
        expect_close(rounded, want, "out", tol=Tolerances())
    expect_close(rounded, want, "out", tol=Tolerances(float64=Tolerance(atol=1e-6, rtol=1e-6)))


def test_exact_means_bit_for_bit():
    want = torch.tensor([0.25, 1.5])
    expect_close(want.clone(), want, tol=EXACT)
    with pytest.raises(AssertionError):
        expect_close(want + 1e-7, want, tol=EXACT)


def test_scalars_take_one_tolerance():
    assert expect_scalar(1.0 + 1e-10, 1.0, name="lr", tol=Tolerance(atol=0.0, rtol=1e-9)) == 1.0 + 1e-10
    with pytest.raises(AssertionError, match=r"lr: expected a finite int or float close to 1 \(rtol 1e-09\)"):
        expect_scalar(1.0 + 1e-8, 1.0, name="lr", tol=Tolerance(atol=0.0, rtol=1e-9))


@pytest.mark.parametrize("call, message", [
    (lambda: expect_close(torch.ones(1), torch.ones(1), tol=EXACT, atol=0.0), "not both"),
    (lambda: expect_scalar(1.0, 1.0, name="x", tol=Tolerances()), "picks by dtype"),
    (lambda: expect_close(torch.ones(1), torch.ones(1), tol={"atol": 0.1}), "must be a Tolerance"),
    (lambda: Tolerance(atol=-1.0, rtol=0.0), "atol must be a number >= 0, got atol=-1.0"),
    (lambda: Tolerance(atol=0.0, rtol=float("nan")), "rtol must be a number >= 0"),
])
def test_authoring_mistakes_are_named(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()
