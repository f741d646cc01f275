"""Checks for clip_grad_norm(parameters, max_norm, norm_type=2.0, eps=1e-6) -> Tensor."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from _clip_grad_norm_helpers import (
    CLIPS,
    INF,
    KEEPS,
    GradCase,
    check,
    grad_cases,
    max_norm_for,
    total_norm,
)
from grader.judge import candidate_raises, expect_tensor

#: three parameters whose gradients differ a lot in size: per-parameter clipping shows
THREE = GradCase(((3,), (2, 2), (4,)), "float32", 0)
TWO_NONE = GradCase(((2,), None, (3, 2), None), "float32", 1)


def _clip(case, ratio, norm_type=2.0):
    return max_norm_for(case.grads(), norm_type, ratio)


# ---------------------------------------------------------------------- the 2-norm


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "The total norm is one number for all the gradients together: the square root of the "
    "sum of squares over every element of every .grad. Return it as computed before clipping."
)
@given(case=grad_cases(), ratio=st.sampled_from(CLIPS + KEEPS))
@example(case=THREE, ratio=0.5)
@example(case=THREE, ratio=2.0)
def test_returns_the_total_norm(sandbox, case, ratio):
    """Returns the joint 2-norm of all gradients, as it was before clipping (a 0-d tensor)"""
    check(sandbox, case, _clip(case, ratio), what="total")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "When the total norm is above max_norm, multiply every gradient by the same factor, "
    "max_norm / (total + eps), so that the joint norm comes down to max_norm."
)
@given(case=grad_cases(), ratio=st.sampled_from(CLIPS))
@example(case=THREE, ratio=0.5)
@example(case=THREE, ratio=0.0)
def test_clips_above_max_norm(sandbox, case, ratio):
    """Above max_norm, every gradient is scaled by max_norm / (total + eps) (max_norm 0 zeroes them)"""
    check(sandbox, case, _clip(case, ratio), what="grads")


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint("At or below max_norm, leave the gradients exactly as they are (do not even rescale by ~1).")
@given(case=grad_cases(), ratio=st.sampled_from(KEEPS))
@example(case=THREE, ratio=1.1)
def test_untouched_below_max_norm(sandbox, case, ratio):
    """Below max_norm, the gradients are left untouched, bit for bit"""
    check(sandbox, case, _clip(case, ratio), what="grads")


# ------------------------------------------------------------------ other norms


@pytest.mark.points(2)
@given(case=grad_cases(), ratio=st.sampled_from(CLIPS + KEEPS))
@example(case=GradCase(((3,), (2,)), "float32", 5), ratio=0.5)
@example(case=THREE, ratio=2.0)
def test_inf_norm(sandbox, case, ratio):
    """norm_type=inf: the largest |g| over all gradients; clipping by it"""
    check(sandbox, case, _clip(case, ratio, INF), INF)


@pytest.mark.points(1)
@given(case=grad_cases(), norm_type=st.sampled_from([1.0, 3.0, 1]), ratio=st.sampled_from(CLIPS + KEEPS))
@example(case=THREE, norm_type=1.0, ratio=0.5)
@example(case=THREE, norm_type=3.0, ratio=0.25)
def test_other_p_norms(sandbox, case, norm_type, ratio):
    """norm_type 1 and 3: the p-norm of all gradients together; clipping by it"""
    check(sandbox, case, _clip(case, ratio, norm_type), norm_type)


@pytest.mark.points(1)
@given(case=grad_cases(dtype="float64"), norm_type=st.sampled_from([2.0, INF]), ratio=st.sampled_from(CLIPS + KEEPS))
@example(case=GradCase(((3,), (2, 2), (4,)), "float64", 0), norm_type=2.0, ratio=0.5)
def test_float64(sandbox, case, norm_type, ratio):
    """float64 gradients: the norm is a float64 tensor and the maths stays in float64"""
    check(sandbox, case, _clip(case, ratio, norm_type), norm_type)


# ------------------------------------------------------------- what comes in


@pytest.mark.points(2)
@given(case=grad_cases(nones=True, min_size=2), ratio=st.sampled_from(CLIPS + KEEPS))
@example(case=TWO_NONE, ratio=0.5)
@example(case=GradCase((None,), "float32", 0), ratio=1.0)
@example(case=GradCase((), "float32", 0), ratio=1.0)
def test_parameters_without_grad(sandbox, case, ratio):
    """Parameters whose .grad is None are skipped (and stay None); none at all: tensor(0.)"""
    grads = case.grads()
    max_norm = 1.0 if all(g is None for g in grads) else _clip(case, ratio)
    check(sandbox, case, max_norm)


@pytest.mark.points(2)
@given(case=grad_cases(min_size=2), ratio=st.sampled_from(CLIPS + KEEPS), pass_as=st.sampled_from(["generator", "tuple"]))
@example(case=THREE, ratio=0.5, pass_as="generator")
@example(case=GradCase(((2, 3),), "float32", 3), ratio=0.5, pass_as="tensor")
@example(case=GradCase(((4,),), "float64", 4), ratio=2.0, pass_as="tensor")
def test_single_tensor_and_generator(sandbox, case, ratio, pass_as):
    """parameters may be one tensor, a tuple or a generator (iterated once)"""
    check(sandbox, case, _clip(case, ratio), pass_as=pass_as)


@pytest.mark.points(1)
def test_clips_in_place(sandbox):
    """Clips in place: each p.grad stays the same tensor object"""
    for case, ratio in [(THREE, 0.5), (TWO_NONE, 0.25)]:
        result = sandbox.call("clip", case.grads(), _clip(case, ratio))
        for i, same in enumerate(result["same_object"]):
            if same is False:
                raise AssertionError(f"parameter {i}: p.grad is a new tensor after clipping; scale the existing "
                                     "gradient in place (an optimizer or hook holding it must see the change)")


@pytest.mark.points(1)
@given(case=grad_cases(), eps=st.sampled_from([0.25, 0.5, 2.0]), ratio=st.sampled_from(CLIPS + KEEPS))
@example(case=THREE, eps=0.5, ratio=0.5)
def test_eps(sandbox, case, eps, ratio):
    """The factor is max_norm / (total + eps), with the eps given"""
    grads = case.grads()
    total = float(total_norm(grads))
    max_norm = total * ratio if ratio < 1 else (total + eps) * ratio  # never between total and total + eps
    check(sandbox, case, max_norm, eps=eps)


@pytest.mark.points(1)
def test_rejects_bad_arguments(sandbox):
    """ValueError naming max_norm when it is < 0, naming norm_type when it is not >= 1 or inf"""
    grads = THREE.grads()
    for max_norm in (-1.0, -1e-9):
        with candidate_raises("ValueError", match="max_norm", what=f"clip_grad_norm(parameters, max_norm={max_norm})"):
            sandbox.call("clip", grads, max_norm)
    for norm_type in (0.5, 0.0, -1.0, -math.inf, math.nan):
        with candidate_raises("ValueError", match="norm_type",
                              what=f"clip_grad_norm(parameters, 1.0, norm_type={norm_type})"):
            sandbox.call("clip", grads, 1.0, norm_type)
    result = sandbox.call("clip", grads, 0)  # max_norm = 0 is allowed: every gradient becomes zero
    for i, g in enumerate(result["grads"]):
        g = expect_tensor(g, name=f"parameter {i}'s .grad after clip_grad_norm(..., max_norm=0)")
        if bool(g.any()):
            raise AssertionError(f"max_norm=0 must zero every gradient; parameter {i}'s is {g.tolist()}")
