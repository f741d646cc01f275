"""The NaN-proof number comparisons checks use: NaN, inf, bools, Opaques and tensors never pass for a float."""

import math
import re

import pytest
import torch

from grader.judge import Opaque, expect_bounded, expect_close, expect_scalar

NAN, INF = float("nan"), float("inf")


def test_expect_scalar_passes_a_close_number_and_returns_it():
    assert expect_scalar(0.7310001, 0.731, name="loss", atol=1e-5) == 0.7310001
    assert expect_scalar(3, 3.0, name="count") == 3.0
    assert expect_scalar(1.0 + 1e-8, 1.0, name="lr", rtol=1e-7) == 1.0 + 1e-8


@pytest.mark.parametrize("got, shown", [
    (NAN, "got nan"), (INF, "got inf"), (-INF, "got -inf"),
])
def test_expect_scalar_never_lets_a_non_finite_value_pass(got, shown):
    with pytest.raises(AssertionError) as e:
        expect_scalar(got, 0.731, name="loss", atol=1e-5)
    assert str(e.value) == f"loss: expected a finite int or float close to 0.731 (atol 1e-05), {shown}"


@pytest.mark.parametrize("got, shown", [
    (True, "a bool (True)"),
    ("0.731", "a str ('0.731')"),
    (Opaque("AlwaysEqual", "<x>"), "a AlwaysEqual"),
    (torch.tensor(0.731), "a torch.float32 tensor of shape ()"),
    (None, "a NoneType (None)"),
])
def test_expect_scalar_wants_the_exact_type(got, shown):
    with pytest.raises(AssertionError, match=f"loss: expected a finite float close to 0.731 .*, got {re.escape(shown)}$"):
        expect_scalar(got, 0.731, name="loss", atol=1e-5, types=(float,))


def test_expect_scalar_takes_a_one_value_tensor_only_when_allowed():
    assert expect_scalar(torch.tensor([2.0]), 2.0, name="norm", allow_tensor=True) == 2.0
    for bad in (torch.tensor(NAN), torch.ones(2), torch.tensor(True)):
        with pytest.raises(AssertionError, match="norm: expected a finite"):
            expect_scalar(bad, 1.0, name="norm", allow_tensor=True)


def test_expect_scalar_says_how_far_off_and_why():
    with pytest.raises(AssertionError) as e:
        expect_scalar(0.8, 0.731, name="loss 0", atol=1e-5, rtol=1e-7, note="the group's full-batch loss")
    assert str(e.value) == ("loss 0: expected a finite int or float close to 0.731 (atol 1e-05, rtol 1e-07), "
                            "got 0.8 (off by 0.069) (the group's full-batch loss)")


def test_a_non_finite_expectation_is_met_only_by_the_same_value():
    assert expect_scalar(INF, INF, name="loss") == INF
    assert math.isnan(expect_scalar(NAN, NAN, name="mean over nothing"))
    for got in (1e308, NAN, -INF):
        with pytest.raises(AssertionError, match="loss: expected int or float inf, got"):
            expect_scalar(got, INF, name="loss")
    with pytest.raises(AssertionError, match="expected int or float nan, got 0.0"):
        expect_scalar(0.0, NAN, name="mean over nothing")


def test_expect_bounded_refuses_nan_on_either_side():
    assert expect_bounded(torch.tensor(0.2), name="total norm", at_most=0.25) == pytest.approx(0.2)
    assert expect_bounded(0.5, name="p-value", at_least=1e-6) == 0.5
    for value in (NAN, torch.tensor(NAN), INF):
        with pytest.raises(AssertionError, match="total norm: expected a finite number <= 0.25, got"):
            expect_bounded(value, name="total norm", at_most=0.25)
        with pytest.raises(AssertionError, match="p-value: expected a finite number >= 1e-06, got"):
            expect_bounded(value, name="p-value", at_least=1e-6)
    with pytest.raises(AssertionError, match=r"distance: expected a finite number <= 0.01, got 0.3 \(not uniform\)"):
        expect_bounded(0.3, name="distance", at_most=0.01, note="not uniform")


def test_expect_close_lets_nan_through_only_where_the_judge_expects_it():
    want = torch.tensor([NAN, 1.0])
    expect_close(torch.tensor([NAN, 1.0]), want, "loss", nan_where_expected=True)
    with pytest.raises(AssertionError, match="loss: "):
        expect_close(torch.tensor([NAN, 1.0]), want, "loss")
    with pytest.raises(AssertionError, match="(?s)loss: .*\nthe per-sample losses$"):
        expect_close(torch.tensor([NAN, NAN]), want, "loss", nan_where_expected=True, note="the per-sample losses")
