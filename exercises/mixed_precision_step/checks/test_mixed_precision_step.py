"""Checks for amp_train_step(model, optimizer, scaler, batch, loss_fn, *, max_grad_norm, device_type="cpu").

The probe's model is float32; its optimizer is a recording SGD and its scaler a recording
torch.amp.GradScaler("cpu"). The truth is a float32 step without autocast or scaler
(see the helpers), compared within bfloat16 tolerance.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _mixed_precision_step_helpers import (
    PARAMS,
    Case,
    check_autocast_events,
    check_params,
    check_returned,
    check_step_grads,
    happened_before_refusal,
    make_params,
    reference,
    stale_grads,
)
from grader.judge import candidate_raises, expect_bounded, seeds


def _check_all(sandbox, case: Case, **extra) -> list:
    calls = case.call(sandbox, **extra)
    ref = reference(case)
    check_step_grads(calls, case, ref)
    check_params(calls, case, ref)
    check_returned(calls, case, ref)
    return calls


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Forward and loss under torch.autocast; backward on scaler.scale(loss); then scaler.step(optimizer) "
    "(which unscales) and scaler.update(). Return loss, skipped and scale as Python float/bool/float."
)
def test_one_step_matches_float32(sandbox):
    """One step equals a float32 step within bfloat16 tolerance; returns loss, skipped, scale"""
    for case in (Case(seed=1), Case(seed=2, lr=0.3, init_scale=2.0**14)):
        _check_all(sandbox, case)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Autocast computes in bfloat16 but must not change the parameters' dtype: never cast the model.")
def test_master_weights_stay_float32(sandbox):
    """Master weights and the gradients the optimizer sees stay float32"""
    calls = Case(seed=3, steps=2).call(sandbox)
    for i, call in enumerate(calls):
        for name, shape in PARAMS.items():
            p = call["params"][name]
            if p.dtype != torch.float32:
                raise AssertionError(f"after step {i}, parameter {name} is {p.dtype}; the master weights must "
                                     f"stay float32 (autocast casts inside the forward pass only)")
            for grads in call["step_grads"]:
                if grads[name] is None or grads[name].dtype != torch.float32:
                    got = None if grads[name] is None else grads[name].dtype
                    raise AssertionError(f"at step {i}, optimizer.step() saw {name}.grad as {got}, expected float32")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Wrap only the forward pass and the loss, loss_fn(model(inputs), targets), in "
    "torch.autocast('cpu', dtype=torch.bfloat16); leave the with-block before backward and the optimizer step."
)
def test_autocast_covers_forward_and_loss_only(sandbox):
    """Autocast (bfloat16) covers the forward pass and loss_fn(model(inputs), targets), not the optimizer step"""
    check_autocast_events(Case(seed=4, steps=2).call(sandbox), "bfloat16")


@pytest.mark.points(3)
@pytest.mark.hint(
    "scaler.step skips optimizer.step() when a gradient is inf or NaN, and scaler.update() then "
    "halves the scale. Report skipped by comparing the scale before and after update()."
)
def test_inf_loss_skips_step_and_halves_scale(sandbox):
    """An inf loss: the step is skipped (weights unchanged), skipped=True, the scale halves"""
    case = Case(seed=5, steps=3, poison={0: "loss"}, momentum=0.9)
    calls = _check_all(sandbox, case)
    for name, start in make_params(case.seed).items():
        if not torch.equal(calls[0]["params"][name], start):
            raise AssertionError(f"{case.describe()}: the skipped step changed {name}; it must stay bit for bit")
    if any(e.startswith("step:") for e in calls[0]["events"]):
        raise AssertionError(f"{case.describe()}: optimizer.step() ran on the step with the inf loss "
                             f"(events: {calls[0]['events']})")


@pytest.mark.points(2)
def test_inf_gradient_skips_step(sandbox):
    """An inf gradient with a finite loss: skipped, weights unchanged, scale halves, training goes on"""
    case = Case(seed=6, steps=3, poison={1: "grad"}, init_scale=2.0**12)
    calls = _check_all(sandbox, case)
    for name in PARAMS:
        if not torch.equal(calls[1]["params"][name], calls[0]["params"][name]):
            raise AssertionError(f"{case.describe()}: the skipped step 1 changed {name}; it must stay bit for bit")


@pytest.mark.points(3)
@pytest.mark.hint(
    "The gradients are multiplied by the scale after backward: clip them only after "
    "scaler.unscale_(optimizer), and call unscale_ once per step (scaler.step knows)."
)
def test_clipping_on_unscaled_gradients(sandbox):
    """max_grad_norm clips the true (unscaled) gradients: the optimizer sees the clipped float32 gradient"""
    for case in (Case(seed=7, max_grad_norm=0.25), Case(seed=8, steps=2, max_grad_norm=0.5, momentum=0.9)):
        calls = _check_all(sandbox, case)
        for i, call in enumerate(calls):
            total = torch.linalg.vector_norm(torch.stack([g.norm() for g in call["step_grads"][0].values()]))
            expect_bounded(total, at_most=case.max_grad_norm * 1.01,
                           name=f"{case.describe()}: at step {i}, the total gradient norm the optimizer saw",
                           note="max_grad_norm, give or take 1%")


@pytest.mark.points(1)
def test_clipping_leaves_small_gradients_alone(sandbox):
    """A max_grad_norm above the gradient's norm changes nothing"""
    _check_all(sandbox, Case(seed=9, steps=2, max_grad_norm=100.0))


@pytest.mark.points(2)
@pytest.mark.hint("Call scaler.update() once per step: it is what grows and shrinks the scale.")
def test_scale_grows_over_steps(sandbox):
    """scaler.update() every step: the scale doubles after growth_interval finite steps, halves on inf"""
    _check_all(sandbox, Case(seed=10, steps=5, growth_interval=2, momentum=0.5, poison={2: "grad"}))


@pytest.mark.points(1)
def test_zero_grad_first(sandbox):
    """optimizer.zero_grad() once per call, before the forward: stale and earlier gradients never leak"""
    g = torch.Generator().manual_seed(11)
    stale = {n: torch.randn(shape, generator=g) * 5 for n, shape in PARAMS.items()}
    case = Case(seed=11, steps=3)
    calls = _check_all(sandbox, case, stale=stale)
    for i, call in enumerate(calls):
        events = call["events"]
        # Whatever dtype the forward ran in: that is test_autocast_covers_forward_and_loss_only's rule, not this one's.
        forward = next((n for n, e in enumerate(events) if e.startswith("forward:")), len(events))
        if events.count("zero_grad") != 1 or events.index("zero_grad") > forward:
            raise AssertionError(f"step {i}: expected one optimizer.zero_grad() before the forward pass "
                                 f"(events: {events})")


@pytest.mark.points(2)
@given(seed=seeds(), clip=st.sampled_from([None, 0.3, 1.0]), momentum=st.sampled_from([0.0, 0.9]),
       poisoned=st.sampled_from([None, "loss", "grad"]))
@example(seed=12, clip=0.3, momentum=0.9, poisoned="grad")
def test_random_runs(sandbox, seed, clip, momentum, poisoned):
    """Random runs of three steps (clipping, momentum, one poisoned step or none) match the float32 reference"""
    case = Case(seed=seed, steps=3, max_grad_norm=clip, momentum=momentum, growth_interval=1,
                poison={1: poisoned} if poisoned else {})
    _check_all(sandbox, case)


@pytest.mark.points(1)
def test_rejects_bad_arguments(sandbox):
    """ValueError naming the argument: max_grad_norm <= 0, device_type not 'cpu' or 'cuda', before anything else"""
    params, stale = make_params(20), stale_grads(21)
    for max_grad_norm, device_type, name in ((0.0, "cpu", "max_grad_norm"), (-1.0, "cpu", "max_grad_norm"),
                                              (None, "tpu", "device_type"), (None, "CPU", "device_type")):
        with candidate_raises("ValueError", match=name, what=f"amp_train_step(..., max_grad_norm={max_grad_norm}, "
                                                             f"device_type={device_type!r})"):
            sandbox.call("amp_error", max_grad_norm, device_type)
        seen = sandbox.call("amp_refusal", params, stale, max_grad_norm, device_type)
        happened = happened_before_refusal(seen, params, stale, init_scale=1024.0)
        if happened:
            raise AssertionError(f"max_grad_norm={max_grad_norm}, device_type={device_type!r}: the ValueError "
                                 f"came after the step had begun: {'; '.join(happened)}. Check both arguments "
                                 "first, before zero_grad(), the forward pass or the scaler")

