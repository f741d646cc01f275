"""What a grading gains beyond its score (grader.judge.annotate): the diagnosis and the guide's follow-ups.

Reports are built in code; the guide is the interface's own model (grader.judge.interview).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from grader.exercise import load_exercise
from grader.judge.annotate import FOLLOW_UPS, Hindsight
from grader.judge.interview import Guide, Question
from grader.mistakes import MistakeRecord, MutantSignature
from grader.reports.model import CheckResult, LoadError, Report, Status, Visibility

TOY = Path(__file__).parent / "fixtures" / "toy"


def report(*failed: str) -> Report:
    checks = [CheckResult(id=f"test_toy.py::{name}", name=name, status=Status.FAILED if name in failed else Status.PASSED,
                          score=0 if name in failed else 1, max_score=1, visibility=Visibility.VISIBLE)
              for name in ("test_small", "test_property")]
    return Report(exercise="toy", graded=True, checks=checks, score=sum(c.score for c in checks), max_score=2)


def question(ask: str, when: str, checks=(), mutants=()) -> Question:
    return Question(ask=ask, answer=f"answer to {ask}", checks=list(checks), mutants=list(mutants), when=when)


def hindsight(ex, guide_questions=()) -> Hindsight:
    record = MistakeRecord(exercise="toy", exercise_fingerprint=ex.fingerprint, reference_sha256="0", checks=[],
                           mutants=[MutantSignature(name="uses_mul", file="mutants/uses_mul.py", held_in=True,
                                                    sha256="0", description="multiplies twice",
                                                    signature=["test_small"])])
    return Hindsight(ex, record, Guide(exercise="toy", questions=list(guide_questions)))


def test_follow_ups_come_from_the_guide_with_why_each_was_asked():
    ex = load_exercise(TOY)
    guide = [question("about the property", "failed", checks=["test_property"]),
             question("about the mistake", "failed", mutants=["uses_mul"]),
             question("deeper", "passed", checks=["test_property"])]
    failing = report("test_small")
    hindsight(ex, guide).annotate(failing)
    assert [d.mutant for d in failing.diagnosis] == ["uses_mul"]
    assert [(f.ask, f.answer, f.because) for f in failing.follow_ups] == [
        ("about the mistake", "answer to about the mistake", "looks like mutant uses_mul"),
        ("deeper", "answer to deeper", "everything it is tied to passed")]
    other = report("test_property")
    hindsight(ex, guide).annotate(other)
    assert [(f.ask, f.because) for f in other.follow_ups] == [("about the property", "check test_property failed")]
    assert len(other.follow_ups) <= FOLLOW_UPS


def test_nothing_to_ask_about_a_file_that_does_not_import_or_was_not_graded():
    ex = load_exercise(TOY)
    guide = [question("deeper", "passed", checks=["test_property"])]
    for r in (report("test_small").model_copy(update={"load_error": LoadError(found="source", summary="SyntaxError")}),
              Report(exercise="toy", graded=False, not_graded_reason="engine died")):
        hindsight(ex, guide).annotate(r)
        assert r.follow_ups == [] and r.diagnosis == []


def test_an_exercise_without_a_record_or_a_guide_gets_neither(tmp_path):
    shutil.copytree(TOY, tmp_path / "toy")
    ex = load_exercise(tmp_path / "toy")
    loaded = Hindsight.load(ex)
    assert loaded.record is None and loaded.guide.questions == []
    failing = report("test_small")
    loaded.annotate(failing)
    assert failing.diagnosis == [] and failing.follow_ups == []
