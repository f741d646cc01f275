"""Checks for train_step(model, optimizer, inputs, targets, loss_fn), on real gloo groups of 1 to 4 ranks.

Every rank starts from the same parameters with its own shard (all shards the
same size). The truth is one ordinary single-process step (plain torch, same
optimizer) on all shards concatenated: with a mean-reduced loss and equal
shards, the mean of the ranks' gradients is that step's gradient.
"""

from __future__ import annotations

import pytest
import torch

from _ddp_step_helpers import (
    PARAM_NAMES,
    TOL,
    WORLDS,
    ddp_run,
    same_on_every_rank,
    single_process,
    train_scenario,
)
from grader.judge import expect_close, expect_scalar


#: The returned loss against the single-process loss (relative): float32 rounding is ~1e-7.
TOL_LOSS = 1e-5


def _runs(**kwargs):
    return [(ws, train_scenario(ws, per_rank, seed=200 + ws, **kwargs)) for ws, per_rank in WORLDS]


def _check_parameters(sandbox, runs, *, what: str) -> dict:
    """Every rank's parameters equal the single-process run's, on every world size."""
    states = ddp_run(sandbox, runs)
    for ws, scenario in runs:
        expected = single_process(scenario)
        same_on_every_rank(states[ws], ws)
        for name in PARAM_NAMES:
            expect_close(states[ws][0].params[name], expected.params[name],
                         f"world size {ws}: {name} after {what} (compared with one process on all shards together)",
                         tol=TOL)
    return states


@pytest.mark.points(3)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Zero the gradients, compute the mean-reduced loss on this rank's shard, backward, average the "
    "gradients over the ranks (sum with all_reduce, divide by the world size), then optimizer.step(). "
    "Every rank must end with the same parameters."
)
def test_train_step_one_sgd_step(sandbox):
    """train_step: one SGD step on every rank equals one step on all shards together"""
    _check_parameters(sandbox, _runs(), what="one SGD step")


@pytest.mark.points(1)
@pytest.mark.hint("Reduce the loss too: all_reduce a copy of it, divide by the world size, return .item().")
def test_train_step_returns_mean_loss(sandbox):
    """train_step: returns the loss averaged over ranks as a float, the same on every rank"""
    runs = _runs()
    states = ddp_run(sandbox, runs)
    for ws, scenario in runs:
        expected = single_process(scenario).losses[0]
        for state in states[ws]:
            report = state.losses[0]
            if report["type"] != "float":
                raise AssertionError(f"world size {ws}: train_step must return a Python float; rank "
                                     f"{state.rank} returned a {report['type']}")
            expect_scalar(report.get("value"), expected, name=f"world size {ws}: the loss rank {state.rank} returned",
                          types=(float,), atol=TOL_LOSS * max(1.0, abs(expected)),
                          note="the mean of the ranks' losses")


@pytest.mark.points(1)
def test_train_step_frozen_and_unused_parameters(sandbox):
    """train_step: a frozen and an unused parameter keep grad None and do not move"""
    runs = _runs(frozen=("body.bias",), optimizer={"name": "sgd", "lr": 0.1, "momentum": 0.9}, steps=2)
    states = _check_parameters(sandbox, runs, what="two steps with body.bias frozen")
    for ws, scenario in runs:
        for state in states[ws]:
            for name in ("body.bias", "spare"):
                if state.grads[name] is not None:
                    raise AssertionError(
                        f"world size {ws}: {name} gets no gradient (frozen or unused) and its .grad must stay "
                        f"None; on rank {state.rank} it is a tensor"
                    )
                if not torch.equal(state.params[name], scenario["params"][name]):
                    raise AssertionError(f"world size {ws}: {name} moved on rank {state.rank}")


@pytest.mark.points(2)
@pytest.mark.hint("Each step starts from zero gradients: backward() adds to whatever .grad holds.")
def test_train_step_several_steps_with_momentum(sandbox):
    """train_step: three steps in a row with momentum SGD, gradients zeroed at each step"""
    runs = _runs(steps=3, optimizer={"name": "sgd", "lr": 0.05, "momentum": 0.9}, stale=True)
    _check_parameters(sandbox, runs, what="three momentum SGD steps")


@pytest.mark.points(1)
def test_train_step_adam_cross_entropy(sandbox):
    """train_step: Adam with a cross-entropy loss, two steps"""
    runs = _runs(steps=2, optimizer={"name": "adam", "lr": 0.01}, loss="cross_entropy")
    _check_parameters(sandbox, runs, what="two Adam steps")
