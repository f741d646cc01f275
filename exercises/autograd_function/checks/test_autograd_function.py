"""Checks for Clamp (a torch.autograd.Function) and clamp(x, min=None, max=None)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _autograd_function_helpers import (
    DTYPES,
    check_forward,
    check_gradient,
    describe,
    expected,
    inputs,
    off_grid,
    on_grid,
    ordered,
    run_and_check,
)
from grader.judge import EXACT, candidate_raises, expect_close, expect_raised, expect_tensor, seeds, shapes

VALUES = torch.tensor([-2.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0])
GRAD = torch.tensor([1.5, -2.0, 0.75, 3.0, -1.25, 2.5, -0.5, 1.75, -3.0])


# ------------------------------------------------------------------------ values


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Each output element is min where x < min, max where x > max, and x otherwise.")
@given(a=on_grid, b=on_grid, shape=shapes(dims=(1, 3), sides=(1, 4)), seed=seeds())
@example(a=-0.5, b=1.0, shape=(9,), seed=0)
@example(a=0.0, b=0.0, shape=(3, 3), seed=1)
def test_forward_values(sandbox, a, b, shape, seed):
    """Forward: min where x < min, max where x > max, x elsewhere"""
    lower, upper = ordered(a, b)
    x, grad_out = inputs(shape, seed)
    check_forward(sandbox.call("run", x, grad_out, lower, upper, requires_grad=False), x, lower, upper)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "backward gets grad_out, the gradient of the loss with respect to the output; return "
    "grad_out where x was inside the bounds and 0 where it was clamped. Compute that mask "
    "from x, not from grad_out."
)
@given(a=off_grid, b=off_grid, shape=shapes(dims=(1, 3), sides=(1, 4)), seed=seeds())
@example(a=-0.5625, b=1.0625, shape=(9,), seed=0)
def test_gradient_inside_and_outside(sandbox, a, b, shape, seed):
    """Gradient: grad_out strictly inside the bounds, 0 outside"""
    lower, upper = ordered(a, b)
    x, grad_out = inputs(shape, seed)
    run_and_check(sandbox, x, grad_out, lower, upper)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "torch.clamp's convention: an element exactly equal to min or max keeps its gradient "
    "(the mask is min <= x <= max, bounds included)."
)
@given(a=on_grid, b=on_grid, seed=seeds())
@example(a=0.0, b=1.0, seed=0)
@example(a=0.5, b=0.5, seed=1)
def test_gradient_at_the_bounds(sandbox, a, b, seed):
    """Gradient at a bound (x == min or x == max) is grad_out, as with torch.clamp"""
    lower, upper = ordered(a, b)
    x, grad_out = inputs((10,), seed)
    x[:3] = lower  # exact ties with both bounds, and some random elements around them
    x[3:6] = upper
    run_and_check(sandbox, x, grad_out, lower, upper)


@pytest.mark.points(2)
@given(bound=on_grid, side=st.sampled_from(["min", "max", "neither"]), seed=seeds())
@example(bound=0.0, side="min", seed=0)
@example(bound=0.0, side="max", seed=1)
@example(bound=0.5, side="neither", seed=2)
def test_one_sided_and_missing_bounds(sandbox, bound, side, seed):
    """A None bound leaves its side unlimited (values and gradient); 0.0 is a real bound"""
    lower, upper = {"min": (bound, None), "max": (None, bound), "neither": (None, None)}[side]
    x, grad_out = inputs((12,), seed)
    x[:2] = bound  # ties with the one bound given
    x[2], x[3] = -2.0, 2.0  # far out on both sides
    run_and_check(sandbox, x, grad_out, lower, upper)


@pytest.mark.points(2)
@given(dtype=st.sampled_from(sorted(DTYPES)), shape=shapes(dims=(0, 3), sides=(0, 4)), a=on_grid, b=on_grid,
       seed=seeds())
@example(dtype="float64", shape=(), a=-0.5, b=0.5, seed=0)
@example(dtype="float64", shape=(2, 0, 3), a=-0.5, b=0.5, seed=1)
@example(dtype="float64", shape=(2, 3, 4), a=-1.0, b=0.25, seed=2)
@example(dtype="float32", shape=(1, 1, 5), a=0.0, b=1.0, seed=3)
def test_dtypes_and_shapes(sandbox, dtype, shape, a, b, seed):
    """Any shape (0-d, empty, 3-D) in float32 and float64: output and gradient keep shape and dtype"""
    lower, upper = ordered(a, b)
    x, grad_out = inputs(shape, seed, DTYPES[dtype])
    run_and_check(sandbox, x, grad_out, lower, upper)


# ----------------------------------------------------------------- the Function


@pytest.mark.points(2)
@given(a=off_grid, b=off_grid, seed=seeds())
@example(a=-0.5625, b=0.6875, seed=0)
def test_gradcheck_float64(sandbox, a, b, seed):
    """torch.autograd.gradcheck passes on Clamp.apply in float64 (points away from the bounds)"""
    lower, upper = ordered(a, b)
    x, grad_out = inputs((2, 4), seed, torch.float64)
    result = sandbox.call("gradcheck", x, lower, upper)
    if result["passed"] is not True:
        raise AssertionError(f"gradcheck failed on Clamp.apply at x={x.tolist()}, min={lower}, max={upper}: "
                             f"{result['error']}")
    run_and_check(sandbox, x, grad_out, lower, upper, via="apply")


@pytest.mark.points(2)
def test_backward_returns_none_for_the_bounds(sandbox):
    """backward returns three values: the gradient of x, then None for min and for max"""
    for lower, upper in [(-0.5, 1.0), (0.0, None), (None, 0.5)]:
        _check_backward_returns(sandbox, lower, upper)


def _check_backward_returns(sandbox, lower, upper):
    result = sandbox.call("backward_returns", VALUES, GRAD, lower, upper)
    what = f"Clamp.backward(ctx, grad_out) after Clamp.apply(x, {lower}, {upper})"
    if result["length"] != 3:
        raise AssertionError(f"{what} returned a {result['kind']}"
                             f"{'' if result['length'] is None else ' of ' + str(result['length'])}: "
                             "expected a tuple of 3 (grad_x, None, None), one per input of forward")
    if result["is_none"] != [False, True, True]:
        raise AssertionError(f"{what}: entries that are None: {result['is_none']}; expected [False, True, True] "
                             "(min and max are numbers, not tensors: their gradient is None)")
    _, want = expected(VALUES, GRAD, lower, upper)
    grad = expect_tensor(result["first"], shape=tuple(VALUES.shape), dtype=VALUES.dtype, name=f"{what}[0]")
    expect_close(grad, want, f"{what}[0]", tol=EXACT)


@pytest.mark.points(1)
def test_graph(sandbox):
    """clamp goes through Clamp (its grad_fn); no graph when x does not require grad"""
    for lower, upper in [(-0.5, 1.0), (None, 0.0), (None, None)]:
        result = sandbox.call("graph", VALUES, lower, upper)
        what = describe(VALUES, lower, upper)
        if result["plain_requires_grad"] or result["plain_grad_fn"] is not None:
            raise AssertionError(f"{what} with x not requiring grad: the output requires grad "
                                 f"(grad_fn {result['plain_grad_fn']}); expected no graph")
        if not result["through_clamp"]:
            raise AssertionError(f"{what} with x requiring grad: the output's grad_fn is "
                                 f"{result['grad_fn']}, not Clamp's backward node: clamp must return "
                                 "Clamp.apply(x, min, max)")


@pytest.mark.points(2)
@given(a=off_grid, b=off_grid, seed=seeds())
@example(a=-0.5625, b=1.0625, seed=0)
def test_input_modified_in_place_after_forward(sandbox, a, b, seed):
    """x modified in place before backward: autograd's RuntimeError, or the forward-time gradient

    Saving x with ctx.save_for_backward gives the RuntimeError; saving a mask computed in
    forward gives the right gradient; keeping x as a ctx attribute silently uses the new values.
    """
    lower, upper = ordered(a, b)
    x, grad_out = inputs((10,), seed)
    x[0], x[1] = 0.5 * (lower + upper), 2.0 + abs(upper)  # one inside, one outside, whatever the seed
    inside = (x >= lower) & (x <= upper)  # nan-safe: the judge's own inputs
    new_values = torch.where(inside, torch.full_like(x, 3.0 + abs(upper)),
                             torch.full_like(x, 0.5 * (lower + upper)))  # every element crosses a bound
    result = sandbox.call("inplace_after_forward", x, new_values, grad_out, lower, upper)
    if result.get("raised") is not None:
        expect_raised(result["raised"], "RuntimeError",
                      what=f"backward after {describe(x, lower, upper)} and x modified in place (autograd's "
                           "RuntimeError is right, and so is no error with the gradient for the forward-time values)")
        return
    check_gradient(result, x, grad_out, lower, upper)


@pytest.mark.points(1)
@given(a=on_grid, b=on_grid, requires_grad=st.booleans(), seed=seeds())
@example(a=-0.5, b=0.5, requires_grad=True, seed=0)
@example(a=-0.5, b=0.5, requires_grad=False, seed=1)
def test_input_left_unchanged(sandbox, a, b, requires_grad, seed):
    """x itself is never modified (forward and backward leave the caller's tensor as it was)"""
    lower, upper = ordered(a, b)
    x, grad_out = inputs((12,), seed)
    x[0], x[1] = lower - 1.0, upper + 1.0  # something to clamp on both sides, whatever the seed
    result = sandbox.call("input_after_call", x, grad_out, lower, upper, requires_grad=requires_grad)
    after = expect_tensor(result["x_after"], shape=tuple(x.shape), dtype=x.dtype,
                          name=f"x after {describe(x, lower, upper)}")
    expect_close(after, x, f"x after {describe(x, lower, upper)} (clamp must return a new tensor and "
                 "leave x as it was, not clamp x in place)", tol=EXACT)


@pytest.mark.points(1)
def test_rejects_min_greater_than_max(sandbox):
    """ValueError naming min and max when min > max"""
    for lower, upper in [(1.0, 0.5), (0.0, -0.0625), (2.0, -2.0)]:
        with candidate_raises("ValueError", match=r"(?s)(min.*max|max.*min)",
                              what=f"clamp(x, min={lower}, max={upper})"):
            sandbox.call("run", VALUES, GRAD, lower, upper, requires_grad=False)
