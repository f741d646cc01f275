"""No check compares a measured number by hand: a NaN passes ``if abs(got - want) > tol: fail``.

The scan is the authoring rule ``nan-safe`` (``grader/authoring/nan_safe.py`` says what it
flags; ``grader validate`` runs it on any exercise folder). This file holds every exercise
of the repository to it, shows the scan on each shape of the pattern and on what it leaves
alone (integers, the judge's own numbers marked ``# nan-safe: <why>``), and attacks the
real checks with NaN: grad_accumulation's and ddp_step's loss checks once passed one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.authoring import Concern
from grader.authoring.nan_safe import scan_checks
from grader.host.validation import all_exercise_names
from tests.authoring_rules import findings, holds

EXERCISES = Path(__file__).resolve().parent.parent / "exercises"


@pytest.mark.parametrize("name", all_exercise_names())
def test_checks_compare_numbers_only_through_the_nan_safe_helpers(name):
    holds(findings(name, Concern.NAN_SAFE))


def _scan_source(tmp_path, source: str) -> list[str]:
    (tmp_path / "test_x.py").write_text(source, encoding="utf-8")
    return [f.code for f in scan_checks(tmp_path)]


def test_the_scan_finds_each_shape_of_the_pattern(tmp_path):
    source = '''
import math, torch

def _distance(u):
    return max(float(u.max()), float(-u.min()))

def test_a(got, want, tol, t, limit, a, b):
    if abs(got - want) > tol: fail()
    if not (got - want).norm() <= tol: fail()
    worst = float(t.abs().max())
    if worst > limit: fail()
    d, threshold = _distance(t), limit
    if d > threshold: fail()
    ok = torch.allclose(a, b) and math.isclose(got, want)
    torch.testing.assert_close(a, b, equal_nan=True)
    return bool(t.sum() < 3)
'''
    assert sorted(_scan_source(tmp_path, source)) == sorted([
        "abs(got - want) > tol", "(got - want).norm() <= tol", "worst > limit", "d > threshold",
        "torch.allclose(a, b)", "math.isclose(got, want)",
        "torch.testing.assert_close(a, b, equal_nan=True)", "t.sum() < 3",
    ])


def test_the_scan_leaves_integers_judge_inputs_and_opted_out_lines_alone(tmp_path):
    source = '''
def reference(metric, best, delta, t, warmup, x, events):
    if t < warmup: pass
    if len(x) <= 12 or x.numel() > 3 or int(x.max()) >= 4: pass
    if events.index("a") > events.index("b"): pass
    return metric < best - delta  # nan-safe: the judge's reference, on the judge's inputs
'''
    assert _scan_source(tmp_path, source) == []


# ------------------------------------------------ the attack, on the checks themselves


@pytest.fixture
def load_checks(monkeypatch):
    """Import one module of an exercise's checks as the judge does (``importable``: its folder on
    sys.path, its shared.py as ``shared``); what the import added to sys.modules leaves it at teardown."""
    import importlib
    import sys

    from grader.judge.plugin import importable

    before = set(sys.modules)
    monkeypatch.setattr(sys, "path", list(sys.path))

    def load(exercise: str, module: str):
        shared = EXERCISES / exercise / "shared.py"
        importable(EXERCISES / exercise / "checks", shared if shared.is_file() else None)
        return importlib.import_module(module)

    yield load
    for name in set(sys.modules) - before:
        if name.startswith(("_", "test_")) or name == "shared":
            del sys.modules[name]


@pytest.mark.parametrize("loss", [float("nan"), float("inf")])
def test_grad_accumulation_loss_check_fails_a_non_finite_loss(load_checks, loss):
    helpers = load_checks("grad_accumulation", "_grad_accumulation_helpers")
    case = helpers.Case(sizes=(2, 2, 2, 2, 2), k=2, seed=4)
    right = helpers.reference(case).losses
    helpers.check_losses({"losses": list(right)}, case)
    with pytest.raises(AssertionError, match=r"loss 0: expected a finite float close to .*, got (nan|inf)"):
        helpers.check_losses({"losses": [loss] * len(right)}, case)


class _FakeDdpSandbox:
    """Answers ddp_run as a correct implementation would, except for the loss every rank returns."""

    def __init__(self, helpers, loss):
        self.helpers, self.loss = helpers, loss

    def call(self, probe, runs):
        assert probe == "ddp_run"
        out = []
        for run in runs:
            expected = self.helpers.single_process(run["scenario"])
            losses = [{"type": "float", "value": self.loss(value)} for value in expected.losses]
            rank = {"params": expected.params, "grads": expected.grads, "losses": losses}
            out.append({"ranks": [rank] * run["world_size"]})
        return out


@pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")  # the checks' points/hint marks
@pytest.mark.parametrize("loss", [float("nan"), float("inf")])
def test_ddp_step_loss_check_fails_a_non_finite_loss(load_checks, loss):
    checks = load_checks("ddp_step", "test_train_step")
    helpers = load_checks("ddp_step", "_ddp_step_helpers")
    checks.test_train_step_returns_mean_loss(_FakeDdpSandbox(helpers, lambda right: right))
    with pytest.raises(AssertionError, match=r"the loss rank 0 returned: expected a finite float close to .*, got"):
        checks.test_train_step_returns_mean_loss(_FakeDdpSandbox(helpers, lambda right: loss))
