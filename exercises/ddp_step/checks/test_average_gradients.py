"""Checks for average_gradients(model), on real gloo process groups of 1 to 4 ranks.

Every rank builds the same model (shared.py: Net) with the same parameters and
its own gradients; the judge knows every rank's gradients, so it knows their mean.
"""

from __future__ import annotations

import pytest
import torch

from _ddp_step_helpers import PARAM_NAMES, TOL, WORLDS, average_scenario, ddp_run, mean_gradients
from grader.judge import expect_close


def _runs(**kwargs):
    return [(ws, average_scenario(ws, seed=100 + ws, **kwargs)) for ws, _ in WORLDS]


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "all_reduce sums: divide by the world size afterwards. Reduce the gradients (p.grad), in place "
    "or by assigning the result back, on every rank."
)
def test_average_gradients_mean(sandbox):
    """average_gradients: every gradient ends as its mean over the ranks"""
    runs = _runs()
    _check_means(runs, ddp_run(sandbox, runs))


@pytest.mark.points(1)
def test_average_gradients_keeps_none(sandbox):
    """average_gradients: a parameter whose .grad is None keeps None on every rank"""
    runs = _runs(none=("spare",), frozen=("body.bias",))
    _check_means(runs, ddp_run(sandbox, runs))


def _check_means(runs, states) -> None:
    """Every rank's gradient is the mean over the ranks; a gradient None on every rank stays None."""
    for ws, scenario in runs:
        expected = mean_gradients(scenario)
        for state in states[ws]:
            for name in PARAM_NAMES:
                got = state.grads[name]
                if expected[name] is None:
                    if got is not None:
                        raise AssertionError(
                            f"world size {ws}: {name} had no gradient (.grad None) and must keep None; on rank "
                            f"{state.rank} it became a tensor"
                        )
                elif got is None:
                    raise AssertionError(f"world size {ws}: the gradient of {name} on rank {state.rank} became None")
                else:
                    expect_close(got, expected[name], f"world size {ws}: gradient of {name} on rank {state.rank}",
                                 tol=TOL)


@pytest.mark.points(1)
def test_average_gradients_leaves_parameters(sandbox):
    """average_gradients: parameters themselves are left exactly as they were"""
    runs = _runs(none=("spare",))
    states = ddp_run(sandbox, runs)
    for ws, scenario in runs:
        for state in states[ws]:
            for name in PARAM_NAMES:
                if not torch.equal(state.params[name], scenario["params"][name]):
                    raise AssertionError(
                        f"world size {ws}: average_gradients changed the parameter {name} on rank {state.rank} "
                        "(only the gradients may change)"
                    )
