"""Checks for EarlyStopping(patience=5, min_delta=0.0, mode="min")."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _early_stopping_helpers import (
    NAN,
    Reference,
    compare_state,
    compare_trace,
    describe,
    metric_lists,
    min_deltas,
    patiences,
    random_weights,
)
from grader.judge import expect_each_raises, expect_equal, expect_raised, seeds


def _run(sandbox, kwargs: dict, metrics: list[float]) -> None:
    result = sandbox.call("es_run", kwargs, metrics)
    compare_trace(result, kwargs, metrics)


# -------------------------------------------------------------------- the counting


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Before any step(): best is inf in mode 'min' and -inf in mode 'max', best_step is -1, "
    "counter is 0 and should_stop is False."
)
def test_initial_state(sandbox):
    """Before any step: best = ±inf, best_step = -1, counter = 0, should_stop = False"""
    for kwargs in ({}, {"mode": "min"}, {"mode": "max", "patience": 2}, {"min_delta": 0.5}):
        result = sandbox.call("es_init", **kwargs)
        compare_state(result, Reference(**kwargs).state(), "before any step", describe(kwargs, []))


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint("EarlyStopping() means patience=5, min_delta=0.0, mode='min'.")
def test_defaults(sandbox):
    """Defaults: patience = 5, min_delta = 0, mode = 'min'"""
    _run(sandbox, {}, [1.0, 0.875, 0.875, 0.875, 0.875, 0.875, 0.875, 0.75])


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "An improvement is metric < best - min_delta. On one, best and best_step (the index of "
    "the step() call) update and counter resets to 0; otherwise counter grows by 1. step() "
    "returns counter >= patience."
)
@given(patience=patiences, min_delta=min_deltas, metrics=metric_lists)
@example(patience=2, min_delta=0.125, metrics=[1.0, 0.875, 0.75, 0.75, 0.75, 0.5])
@example(patience=1, min_delta=0.0, metrics=[0.5, 0.5, 0.25, 0.375, 0.25])
@example(patience=3, min_delta=0.25, metrics=[NAN, 2.0, 1.875, 1.75, 1.625, 1.5, 1.0])
def test_mode_min(sandbox, patience, min_delta, metrics):
    """mode 'min': best, best_step, counter, should_stop and the return value at every step"""
    _run(sandbox, {"patience": patience, "min_delta": min_delta, "mode": "min"}, metrics)


@pytest.mark.points(2)
@given(patience=patiences, min_delta=min_deltas, metrics=metric_lists)
@example(patience=2, min_delta=0.125, metrics=[-1.0, -0.875, -0.75, -0.75, -0.75, -0.5])
@example(patience=3, min_delta=0.25, metrics=[NAN, -2.0, -1.875, -1.75, -1.625, -1.5, -1.0])
def test_mode_max(sandbox, patience, min_delta, metrics):
    """mode 'max': best, best_step, counter, should_stop and the return value at every step"""
    _run(sandbox, {"patience": patience, "min_delta": min_delta, "mode": "max"}, metrics)


@pytest.mark.points(1)
def test_ties_are_not_improvements(sandbox):
    """A tie (metric == best - min_delta, or best + min_delta in 'max') is not an improvement"""
    cases = [
        ({"patience": 3, "min_delta": 0.125}, [1.0, 0.875, 0.75]),
        ({"patience": 3, "min_delta": 0.0}, [1.0, 1.0, 0.5, 0.5]),
        ({"patience": 3, "min_delta": 0.5}, [2.0, 1.5, 1.25, 1.0]),
        ({"patience": 3, "min_delta": 0.125, "mode": "max"}, [1.0, 1.125, 1.25]),
        ({"patience": 3, "min_delta": 0.0, "mode": "max"}, [-1.0, -1.0, 0.0, 0.0]),
    ]
    for kwargs, metrics in cases:
        _run(sandbox, kwargs, metrics)


@pytest.mark.points(1)
def test_nan_never_improves(sandbox):
    """NaN never improves (counter grows); the first finite metric always improves"""
    cases = [
        ({"patience": 2}, [NAN, NAN, 1.0, NAN, 0.5, NAN]),
        ({"patience": 3, "mode": "max"}, [NAN, -3.0, NAN, NAN, -2.0]),
        ({"patience": 2, "min_delta": 100.0}, [NAN, 5.0, -200.0]),
        ({"patience": 2, "min_delta": 100.0, "mode": "max"}, [-5.0, 200.0, NAN]),
    ]
    for kwargs, metrics in cases:
        _run(sandbox, kwargs, metrics)


@pytest.mark.points(1)
def test_keeps_counting_after_stop(sandbox):
    """After step() returned True, the next calls go on counting with the same rules"""
    _run(sandbox, {"patience": 2}, [1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25])
    _run(sandbox, {"patience": 1, "mode": "max"}, [0.0, 0.0, 0.0, 1.0, 1.0])


@pytest.mark.points(1)
def test_rejects_bad_arguments(sandbox):
    """ValueError naming the argument: patience < 1, min_delta < 0, mode not 'min'/'max'"""
    bad = [
        ({"patience": 0}, "patience"),
        ({"patience": -3}, "patience"),
        ({"min_delta": -0.125}, "min_delta"),
        ({"min_delta": -1e-9, "patience": 2}, "min_delta"),
        ({"mode": "avg"}, "mode"),
        ({"mode": "minimum"}, "mode"),
    ]
    expect_each_raises("ValueError", [
        (f"EarlyStopping({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})", name,
         lambda kwargs=kwargs: sandbox.call("es_init", **kwargs))
        for kwargs, name in bad])


# ----------------------------------------------------------------------- snapshots


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "On an improvement with a model, keep a copy of model.state_dict() (parameters and "
    "buffers); restore_best_weights(model) loads that copy back."
)
@given(
    patience=patiences,
    min_delta=min_deltas,
    mode=st.sampled_from(["min", "max"]),
    metrics=metric_lists.filter(lambda ms: any(not math.isnan(m) for m in ms)),
    seed=seeds(),
)
@example(patience=2, min_delta=0.0, mode="min", metrics=[1.0, 0.5, 0.75, 0.25, 0.5, 0.5], seed=1)
@example(patience=1, min_delta=0.0, mode="max", metrics=[0.5], seed=2)
def test_restores_best_weights(sandbox, patience, min_delta, mode, metrics, seed):
    """restore_best_weights loads the model's state_dict from the best step (buffers included)"""
    g = torch.Generator().manual_seed(seed)
    kwargs = {"patience": patience, "min_delta": min_delta, "mode": mode}
    states = [random_weights(g) for _ in metrics]
    trained = random_weights(g)
    result = sandbox.call("es_weights", kwargs, [[m, s] for m, s in zip(metrics, states)], then=[trained])
    ref = Reference(**kwargs)
    for m in metrics:
        ref.step(m)
    expect_equal(result["restored"][0], states[ref.best_step],
                 name=f"after {describe(kwargs, metrics)}, each step with the model, the weights restored "
                      f"(expected those of step {ref.best_step})")


@pytest.mark.points(2)
def test_snapshot_is_an_independent_copy(sandbox):
    """The snapshot is a copy: training the model in place, before or after a restore, leaves it intact"""
    g = torch.Generator().manual_seed(7)
    best, later, trained, retrained = (random_weights(g) for _ in range(4))
    steps = [[1.0, best], [2.0, later]]  # step 1 does not improve; the model has changed in place
    result = sandbox.call("es_weights", {"patience": 3}, steps, then=[trained, retrained])
    what = ("step(1.0, model), the model trained in place, step(2.0, model), trained in place "
            "again, then restore_best_weights(model)")
    expect_equal(result["restored"][0], best, name=what)
    expect_equal(result["restored"][1], best,
                 name="after a first restore, the model trained in place, then restored a second time")


@pytest.mark.points(1)
def test_restores_into_the_model_given(sandbox):
    """restore_best_weights(model) loads into the model it is given (a new one of the same architecture)"""
    g = torch.Generator().manual_seed(11)
    best, later, fresh = (random_weights(g) for _ in range(3))
    steps = [[0.5, best], [1.0, later]]
    result = sandbox.call("es_weights", {"patience": 1}, steps, then=[fresh], fresh=fresh)
    expect_equal(result["restored"][0], best,
                 name="a new model of the same architecture after restore_best_weights(new_model)")


@pytest.mark.points(1)
def test_restore_without_snapshot_raises(sandbox):
    """RuntimeError from restore_best_weights when no snapshot was taken

    NotImplementedError, a subclass of RuntimeError, does not count: it is what an
    unfinished method raises.
    """
    g = torch.Generator().manual_seed(13)
    scenarios = [
        ([], "before any step"),
        ([[1.0, None], [0.5, None]], "after improvements made without a model"),
        ([[NAN, random_weights(g)], [NAN, random_weights(g)]], "after steps with a model that never improved (NaN)"),
        ([[1.0, None], [2.0, random_weights(g)]], "after an improvement without a model, then a step "
                                                  "with one that did not improve"),
    ]
    for steps, when in scenarios:
        result = sandbox.call("es_restore", {"patience": 2}, steps)
        expect_raised(result.get("raised"), "RuntimeError", what=f"restore_best_weights {when}")


# ------------------------------------------------------------------------- memory


@pytest.mark.points(1)
def test_writes_no_files(sandbox):
    """Keeps everything in memory: writes no files (torch.save to a path included)"""
    result = sandbox.call("es_files")
    problems = []
    if result["new"]:
        problems.append(f"created {', '.join(result['new'][:5])}")
    if result["changed"]:
        problems.append(f"changed {', '.join(result['changed'][:5])}")
    problems += result["saved"][:3] + result["opened"][:3]
    if problems:
        raise AssertionError(
            "EarlyStopping must keep everything in memory and write no files; during ordinary "
            "use (steps with a model, a restore) it: " + "; ".join(problems)
        )
