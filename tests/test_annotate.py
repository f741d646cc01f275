"""What a grading gains beyond its score (grader.hindsight.annotate): the diagnosis and the guide's follow-ups.

Reports are built in code; the guide is the interface's own model (grader.hindsight.interview).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from grader.exercise import load_exercise
from grader.hindsight.annotate import FOLLOW_UPS, Hindsight
from grader.hindsight.interview import Guide, Question
from grader.hindsight.records import MistakeRecord, MutantSignature, losses
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
                                                    signature=losses(report("test_small")))])
    return Hindsight(ex, record, Guide(exercise="toy", questions=list(guide_questions)))


def test_annotating_returns_a_new_report_and_leaves_the_given_one_as_it_was():
    ex = load_exercise(TOY)
    failing = report("test_small")
    before = failing.model_dump()
    annotated = hindsight(ex, [question("about the mistake", "failed", mutants=["uses_mul"])]).annotate(failing)
    assert failing.model_dump() == before and annotated is not failing and annotated.follow_ups


def test_follow_ups_come_from_the_guide_with_why_each_was_asked():
    ex = load_exercise(TOY)
    guide = [question("about the property", "failed", checks=["test_property"]),
             question("about the mistake", "failed", mutants=["uses_mul"]),
             question("deeper", "passed", checks=["test_property"])]
    failing = report("test_small")
    failing = hindsight(ex, guide).annotate(failing)
    assert [d.mutant for d in failing.diagnosis] == ["uses_mul"]
    assert [(f.ask, f.answer, f.because) for f in failing.follow_ups] == [
        ("about the mistake", "answer to about the mistake", "looks like mutant uses_mul"),
        ("deeper", "answer to deeper", "everything it is tied to passed")]
    other = report("test_property")
    other = hindsight(ex, guide).annotate(other)
    assert [(f.ask, f.because) for f in other.follow_ups] == [("about the property", "check test_property failed")]
    assert len(other.follow_ups) <= FOLLOW_UPS


def test_nothing_to_ask_about_a_file_that_does_not_import_or_was_not_graded():
    ex = load_exercise(TOY)
    guide = [question("deeper", "passed", checks=["test_property"])]
    for r in (report("test_small").model_copy(update={"load_error": LoadError(found="source", summary="SyntaxError")}),
              Report(exercise="toy", graded=False, not_graded_reason="engine died")):
        annotated = hindsight(ex, guide).annotate(r)
        assert annotated.follow_ups == [] and annotated.diagnosis == []


def test_an_exercise_without_a_record_or_a_guide_gets_neither(tmp_path):
    shutil.copytree(TOY, tmp_path / "toy")
    ex = load_exercise(tmp_path / "toy")
    loaded = Hindsight.load(ex)
    assert loaded.record is None and loaded.guide.questions == []
    failing = report("test_small")
    annotated = loaded.annotate(failing)
    assert annotated.diagnosis == [] and annotated.follow_ups == []


# --- questions chosen from what happened (issue 26), on kv_cache_decode's own guide ---------------------------

ATTENTION = ["test_decode_matches_causal_attention", "test_cache_grows_by_one_token", "test_step_from_a_given_cache",
             "test_step_float64", "test_step_leaves_arguments_alone"]
SAMPLER = ["test_samples_stay_in_the_nucleus", "test_ties_rank_lower_index_first",
           "test_frequencies_follow_the_renormalised_nucleus"]
WRONG_SHAPE = "Your cache came back with the wrong shape"
OUTSIDE_NUCLEUS = "Your sampler drew a token outside the nucleus"


def kv_report(lost: list[str], status: Status, **fields) -> Report:
    ex = load_exercise("kv_cache_decode")
    names = list(dict.fromkeys([*ATTENTION, *SAMPLER, "test_reproducible_from_the_generator"]))
    checks = [CheckResult(id=f"test_kv.py::{n}", name=n, status=status if n in lost else Status.PASSED,
                          score=0 if n in lost else 1, max_score=1, visibility=Visibility.VISIBLE,
                          **(fields if n in lost else {})) for n in names]
    report = Report(exercise=ex.name, graded=True, checks=checks, score=sum(c.score for c in checks),
                    max_score=len(checks))
    return Hindsight.load(ex).annotate(report)


def test_a_looping_candidate_is_not_asked_about_a_wrong_shape():
    report = kv_report(ATTENTION, Status.TIMEOUT)
    asks = [f.ask for f in report.follow_ups]
    assert not any(WRONG_SHAPE in a for a in asks), asks
    first = report.follow_ups[0]
    assert first.ask.startswith("Some calls to your code never returned before the deadline")
    assert first.because == "check test_decode_matches_causal_attention timed out"
    assert all("failed" not in f.because for f in report.follow_ups)


def test_a_forbidden_only_loss_is_asked_about_the_forbidden_api_not_a_wrong_answer():
    sdpa = "torch.nn.functional.scaled_dot_product_attention"
    report = kv_report(ATTENTION, Status.FAILED, penalty="forbidden", forbidden=[sdpa])
    asks = [f.ask for f in report.follow_ups]
    assert not any(WRONG_SHAPE in a for a in asks), asks
    assert asks[0].startswith(f"Your solution uses {sdpa}, which this exercise rules out")
    assert report.follow_ups[0].because == f"check test_decode_matches_causal_attention got no credit for the forbidden {sdpa}"


def test_a_sampler_that_raises_is_not_told_it_drew_outside_the_nucleus():
    report = kv_report(SAMPLER, Status.ERROR, raised="TypeError", message="your code raised TypeError: bad")
    asks = [f.ask for f in report.follow_ups]
    assert not any(OUTSIDE_NUCLEUS in a for a in asks), asks
    assert asks[0].startswith("Your code raised TypeError") and report.follow_ups[0].because == (
        "check test_samples_stay_in_the_nucleus raised TypeError")
    wrong = kv_report(SAMPLER, Status.FAILED)  # the same checks lost as wrong answers: the guide's own question
    assert wrong.follow_ups[0].ask.startswith(OUTSIDE_NUCLEUS)
    assert wrong.follow_ups[0].because == "check test_samples_stay_in_the_nucleus failed"
