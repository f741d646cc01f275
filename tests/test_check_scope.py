"""A practice run grades the visible checks only (``grade(checks="visible")``): the hidden ones never run.

The proof is the judge's own events: in a practice run it collects and runs the visible checks
alone; a full grading of the same file runs the hidden one too.
"""

from __future__ import annotations

import pytest

from grader.host import check_scope
from grader.host.grading import grade
from grader.reports.model import CheckResult, Report, Status, Visibility
from grader.reports.warning import WarningCode
from grader.wire.events import CheckFinished, Collected
from grader.wire.spec import CheckSpec
from tests.conftest import TOY

def _heard(events: list) -> tuple[list[str], list[str]]:
    """What the judge collected and what it ran, from its own events."""
    collected = [s.id for e in events if isinstance(e, Collected) for s in e.checks]
    return collected, [e.id for e in events if isinstance(e, CheckFinished)]


def test_a_practice_run_never_runs_a_hidden_check_and_says_so():
    practice_events, full_events = [], []
    practice = grade(TOY, TOY / "solution.py", sandbox="local", checks="visible", on_event=practice_events.append)
    visible = ["test_toy.py::test_scale_small", "test_toy.py::test_rejects_bad_factor"]
    assert _heard(practice_events) == (visible, visible)  # the judge never collected the hidden check, nor ran it
    assert [c.id for c in practice.checks] == visible
    assert (practice.graded, practice.score, practice.max_score) == (True, 3.0, 3.0)
    note = [w.message for w in practice.warnings if w.code is WarningCode.VISIBLE_ONLY]
    assert note == ["visible checks only: the hidden checks (3 points) were not run; they are graded when the answer "
                    "is handed in"]
    full = grade(TOY, TOY / "solution.py", sandbox="local", on_event=full_events.append)
    assert "test_toy.py::test_scale_property" in _heard(full_events)[1] and full.score == 6.0  # the hidden one, run


def test_a_practice_run_of_the_stub_lists_the_visible_checks_alone():
    stub = grade(TOY, TOY / "toy.py", sandbox="local", checks="visible")
    assert {c.visibility for c in stub.checks} == {Visibility.VISIBLE} and len(stub.checks) == 2
    assert stub.load_error is not None and stub.load_error.found == "stub"


def spec(check_id: str, visibility: str, points: float = 1.0) -> CheckSpec:
    return CheckSpec(id=check_id, name=check_id, points=points, visibility=Visibility(visibility))


def test_a_hidden_id_that_prefixes_a_visible_one_runs_and_is_dropped_rather_than_losing_the_visible_check(monkeypatch):
    from grader.exercise import load_exercise

    specs = [spec("t.py::test_a", "hidden", 2), spec("t.py::test_ab", "visible"), spec("t.py::test_c[1]", "hidden")]
    monkeypatch.setattr("grader.host.collected.cached_checks", lambda ex: specs)
    scope = check_scope.CheckScope.of(load_exercise(TOY), "visible")
    assert scope.pytest_args == ("--deselect", "t.py::test_c[1]")  # --deselect matches prefixes: test_a would take test_ab
    report = Report(exercise="toy", graded=True, score=3.0, max_score=4.0, checks=[
        CheckResult(id="t.py::test_a", name="a", status=Status.PASSED, score=2.0, max_score=2.0,
                    visibility=Visibility.HIDDEN),
        CheckResult(id="t.py::test_ab", name="ab", status=Status.PASSED, score=1.0, max_score=1.0,
                    visibility=Visibility.VISIBLE),
        CheckResult(id="t.py::test_c[1]", name="c", status=Status.FAILED, score=0.0, max_score=1.0,
                    visibility=Visibility.HIDDEN)])
    narrowed = scope.narrow(report)
    assert [c.id for c in narrowed.checks] == ["t.py::test_ab"] and (narrowed.score, narrowed.max_score) == (1.0, 1.0)
    assert check_scope.CheckScope.of(load_exercise(TOY), "all").narrow(report) is report
    with pytest.raises(ValueError, match="checks must be one of all, visible"):
        check_scope.CheckScope.of(load_exercise(TOY), "hidden")
