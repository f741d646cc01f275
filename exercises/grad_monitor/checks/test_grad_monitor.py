"""Checks for GradMonitor(model, vanish_below, explode_above), a context manager of tensor gradient hooks."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _grad_monitor_helpers import (
    NAMES,
    check_hooks_inside,
    check_hooks_same,
    check_report,
    expected,
    one_hot,
    step,
    weights,
)
from grader.judge import expect_close, expect_equal, expect_raised, expect_tensor, seeds

INF, NAN = math.inf, math.nan


def _run(sandbox, state, frozen, kwargs, steps, **more):
    return sandbox.call("monitor", state, frozen, kwargs, steps, **more)


# ------------------------------------------------------------------ norms


@pytest.mark.points(3)
@pytest.mark.visibility("visible")
@pytest.mark.hint("In __enter__, call p.register_hook(hook) on every parameter with requires_grad and keep "
                  "the handles; the hook receives the gradient of that backward pass: append "
                  "float(torch.linalg.vector_norm(grad)) to that parameter's list. Return self from __enter__.")
@given(seed=seeds(), rows=st.integers(1, 3), aux=st.booleans())
@example(seed=1, rows=2, aux=True)
def test_norms_match(sandbox, seed, rows, aux):
    """One backward pass: each parameter's norm is the L2 norm of its gradient"""
    state = weights(seed)
    steps = [step(seed, rows, aux=aux)]
    result = _run(sandbox, state, [], {}, steps)
    if result["entered_is_self"] is not True:
        raise AssertionError("`with GradMonitor(model) as mon` must give the monitor itself (__enter__ returns self)")
    want, _ = expected(state, [], steps)
    check_report(result["report"], want, f"one backward pass (aux={aux})", flags=False)


@pytest.mark.points(2)
@given(seed=seeds(), plan=st.lists(st.tuples(st.booleans(), st.booleans()), min_size=2, max_size=3))
@example(seed=2, plan=[(False, True), (False, True), (False, False)])
@example(seed=3, plan=[(True, False), (False, True)])
def test_norms_per_backward(sandbox, seed, plan):
    """Several backward passes in one block: one norm per pass, of that pass's gradient, in order"""
    state = weights(seed)
    steps = [step(seed + i, 2, zero_grad=zero, aux=aux) for i, (zero, aux) in enumerate(plan)]
    result = _run(sandbox, state, [], {}, steps)
    want, _ = expected(state, [], steps)
    where = "passes " + ", ".join(f"{i + 1} (zero_grad={z}, aux={a})" for i, (z, a) in enumerate(plan))
    check_report(result["report"], want, where)


# ------------------------------------------------------------------ flags


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("report() has an entry for every parameter of model.named_parameters(); a trainable one whose "
                  "hook never ran in the block is {'norms': [], 'flags': ['unused']}. A gradient of zeros did "
                  "arrive: its norm is 0.0, which is 'vanishing', not 'unused'.")
def test_unused_and_vanishing(sandbox):
    """A parameter no gradient reached is flagged 'unused'; an all-zero gradient is 'vanishing'"""
    state = weights(4, zero=("fc2.bias",))
    steps = [step(4, 3)]
    result = _run(sandbox, state, [], {}, steps)
    want, _ = expected(state, [], steps)
    check_report(result["report"], want, "forward without the aux layer (aux.weight and aux.bias unused)")
    steps = [step(5, 2, silent=True), step(6, 2, silent=True)]
    result = _run(sandbox, state, [], {"vanish_below": 1e-6, "explode_above": 10.0}, steps)
    want, _ = expected(state, [], steps, 1e-6, 10.0)
    check_report(result["report"], want, "two passes of sum(out * 0) (every gradient is zero; fc2.bias is zero too)")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Flag 'vanishing' when a norm < vanish_below and 'exploding' when a norm > explode_above, "
                  "using the thresholds given to the constructor.")
@given(seed=seeds(), vanish=st.floats(1e-3, 0.3), explode=st.floats(0.5, 3.0),
       big=st.sampled_from(["gate", "fc2.bias", "fc1.bias"]), scale=st.floats(5.0, 50.0))
@example(seed=7, vanish=0.2, explode=1.0, big="gate", scale=20.0)
def test_threshold_flags(sandbox, seed, vanish, explode, big, scale):
    """'vanishing' and 'exploding' follow the constructor's thresholds"""
    state = weights(seed)
    n = state[big].numel()
    steps = [step(seed, 2, extra={big: torch.full((n,), scale)}),
             step(seed + 1, 1, aux=True, zero_grad=True)]
    kwargs = {"vanish_below": vanish, "explode_above": explode}
    result = _run(sandbox, state, [], kwargs, steps)
    want, _ = expected(state, [], steps, vanish, explode)
    check_report(result["report"], want, f"GradMonitor(model, vanish_below={vanish:.4g}, explode_above={explode:.4g})",
                 norms=False)


@pytest.mark.points(1)
def test_threshold_bounds(sandbox):
    """A norm exactly equal to a threshold is not flagged (both bounds are strict)"""
    state = weights(8)
    extra = {"gate": torch.tensor([2.0, 2.0, 1.0]),        # norm 3.0 == explode_above
             "fc2.bias": one_hot(3, 1, 0.25),               # norm 0.25 == vanish_below
             "fc1.bias": one_hot(6, 5, 0.125),              # 0.125 < 0.25: vanishing
             "fc2.weight": torch.full((3, 6), 2.0)}         # norm sqrt(72) > 3: exploding
    steps = [step(8, 2, silent=True, extra=extra)]
    result = _run(sandbox, state, [], {"vanish_below": 0.25, "explode_above": 3.0}, steps)
    want, _ = expected(state, [], steps, 0.25, 3.0)
    check_report(result["report"], want, "vanish_below=0.25, explode_above=3.0, gradients of norms exactly 3.0 "
                 "(gate) and 0.25 (fc2.bias)")


@pytest.mark.points(1)
def test_default_thresholds(sandbox):
    """Without arguments the thresholds are vanish_below=1e-7 and explode_above=1e3"""
    state = weights(9)
    extra = {"gate": one_hot(3, 0, 1e-8), "fc2.bias": one_hot(3, 2, 1e-6),
             "fc1.bias": one_hot(6, 0, 1000.0),
             "fc2.weight": one_hot(18, 0, 1000.5).reshape(3, 6)}   # just above 1e3: a default of 1001 misses it
    steps = [step(9, 2, silent=True, extra=extra)]
    result = _run(sandbox, state, [], {}, steps)
    want, _ = expected(state, [], steps)
    check_report(result["report"], want,
                 "GradMonitor(model) with gradients of norm 1e-8, 1e-6, 1e3 and 1000.5")


@pytest.mark.points(2)
def test_nan_inf_flagged(sandbox):
    """A gradient holding NaN is flagged 'nan' (norm nan), one holding inf 'inf' (norm inf), never vanishing or exploding"""
    state = weights(10)
    extra = {"gate": one_hot(3, 0, NAN), "fc2.bias": one_hot(3, 2, -INF),
             "fc1.bias": torch.tensor([NAN, INF, 0.0, 0.0, 0.0, 0.0])}
    steps = [step(10, 2, extra=extra), step(11, 2, zero_grad=True)]
    result = _run(sandbox, state, [], {"vanish_below": 1e-3, "explode_above": 5.0}, steps)
    want, _ = expected(state, [], steps, 1e-3, 5.0)
    check_report(result["report"], want, "pass 1 injects NaN into gate's gradient, -inf into fc2.bias's and both "
                 "into fc1.bias's; pass 2 is finite")


@pytest.mark.points(1)
def test_gradients_unchanged(sandbox):
    """The hooks only observe: every .grad is what it would be without the monitor, NaN and inf included"""
    state = weights(12)
    extra = {"gate": one_hot(3, 1, NAN), "fc2.bias": one_hot(3, 0, INF), "fc1.weight": torch.full((6, 4), 1e4)}
    steps = [step(12, 3, extra=extra, aux=True), step(13, 2), step(14, 1, silent=True)]
    result = _run(sandbox, state, [], {"vanish_below": 1e-3, "explode_above": 5.0}, steps)
    _, grads = expected(state, [], steps, 1e-3, 5.0)
    for name, want in grads.items():
        got = result["grads"].get(name)
        if got is None:
            raise AssertionError(f"no gradient reached {name} inside the block")
        got = expect_tensor(got, shape=tuple(want.shape), dtype=want.dtype, finite=False, name=f"{name}.grad")
        expect_close(got, want, f"{name}.grad after three passes without zero_grad (NaN and inf injected in pass 1)",
                     atol=1e-5, rtol=1e-5, nan_where_expected=True,
                     note="a hook must return None and change nothing in place")


# ------------------------------------------------------------------ frozen parameters and hooks


@pytest.mark.points(2)
@given(seed=seeds(), frozen=st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True),
       aux=st.booleans())
@example(seed=15, frozen=["fc1.weight", "aux.bias"], aux=False)
@example(seed=16, frozen=["gate"], aux=True)
def test_frozen_parameters(sandbox, seed, frozen, aux):
    """Frozen parameters are reported as {'norms': [], 'flags': ['frozen']} and never hooked"""
    state = weights(seed)
    steps = [step(seed, 2, aux=aux)]
    result = _run(sandbox, state, frozen, {}, steps)
    check_hooks_inside(result["hooks_before"], result["hooks_inside"], frozen, f"frozen={frozen}")
    want, _ = expected(state, frozen, steps)
    check_report(result["report"], want, f"frozen={frozen}, aux={aux}")


@pytest.mark.points(1)
def test_tensor_hooks_only(sandbox):
    """Inside the block: exactly one tensor hook per trainable parameter, and no module hooks"""
    state = weights(17)
    result = _run(sandbox, state, [], {}, [step(17, 2, aux=True)])
    check_hooks_inside(result["hooks_before"], result["hooks_inside"], [], "no frozen parameter")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Keep the handles that p.register_hook returns and call .remove() on each in __exit__; "
                  "keep the recorded norms: report() after the block still gives them.")
def test_hooks_removed_on_exit(sandbox):
    """On leaving the block every hook is removed: a later backward changes nothing in the report"""
    state = weights(18)
    steps = [step(18, 2, aux=True)]
    result = _run(sandbox, state, ["fc1.bias"], {}, steps, after=step(19, 3, aux=True))
    check_hooks_same(result["hooks_before"], result["hooks_after"], "after the with block")
    want, _ = expected(state, ["fc1.bias"], steps)
    check_report(result["report"], want, "right after the block")
    check_report(result["report_after"], want, "after one more backward pass outside the block (nothing may change)")


@pytest.mark.points(2)
def test_hooks_removed_on_exception(sandbox):
    """An exception inside the block still removes every hook, and propagates unchanged"""
    state = weights(20)
    steps = [step(20, 2)]
    result = sandbox.call("monitor_raising", state, ["gate"], steps)
    escaped = result["escaped"]
    if escaped is None or escaped["type"] != "LookupError":
        got = "nothing" if escaped is None else f"{escaped['type']}: {escaped['message']}"
        raise AssertionError(f"a LookupError raised inside the with block must propagate out of it; {got} came out")
    check_hooks_same(result["hooks_before"], result["hooks_after"], "after a LookupError raised inside the block")
    want, _ = expected(state, ["gate"], steps)
    check_report(result["report"], want, "after the block that raised (one backward pass ran first)")


@pytest.mark.points(1)
def test_keeps_owners_hooks(sandbox):
    """Hooks the model's owner put on a parameter before the block stay registered and keep running"""
    state = weights(21)
    steps = [step(21, 2), step(22, 2)]
    result = _run(sandbox, state, [], {}, steps, after=step(23, 2), owner="fc2.weight")
    check_hooks_same(result["hooks_before"], result["hooks_after"], "after the block, with the owner's hook on fc2.weight")
    expect_equal([result["owner_calls_inside"], result["owner_calls_after"]], [2, 3],
                 name="calls of the owner's hook on fc2.weight (two passes inside the block, then three in all)")
