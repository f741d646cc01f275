"""grader.reports.derived and grader.reports.compare: what follows from a report's checks is recomputed, never
believed, and two reports are compared on their whole decision."""

from __future__ import annotations

import json

import pytest

from grader.reports.compare import decision_differences
from grader.reports.derived import EditedReport, edits, report_flags
from grader.reports.model import (CheckResult, Finding, FindingKind, ForbiddenHit, Report, Status, Visibility,
                                  total)
from grader.reports.redact import for_audience
from grader.reports.derived import report_from_json


def check(name, status=Status.PASSED, points=2.0, **kw) -> CheckResult:
    return CheckResult(id=f"test_x.py::{name}", name=name, status=status,
                       score=points if status is Status.PASSED else 0.0, max_score=points,
                       visibility=kw.pop("visibility", Visibility.VISIBLE), **kw)


def graded(*checks: CheckResult, **kw) -> Report:
    score, max_score = total(list(checks))
    return Report(exercise="attention", graded=True, checks=list(checks), score=score, max_score=max_score, **kw)


def forbidden_report() -> Report:
    """0/4 with a forbidden flag: what the attack turns into 4/4 with none."""
    hit = ForbiddenHit(api="torch.nn.functional.scaled_dot_product_attention", how="runtime", where="test_x.py::a",
                       check="test_x.py::a")
    return graded(check("a", Status.FAILED, forbidden=[hit.api]), check("b", Status.TIMEOUT), forbidden=[hit])


def refused(report: Report) -> str:
    with pytest.raises(EditedReport) as e:
        report_from_json(report.to_json())
    return str(e.value)


def test_a_report_the_grader_made_reads_back_unchanged():
    for report in (forbidden_report(), graded(check("a"), check("b", Status.SKIPPED)),
                   Report(exercise="x", graded=False, not_graded_reason="engine down")):
        assert edits(report) == [] and report_from_json(report.to_json()) == report


def test_the_attack_score_and_flags_edited_is_refused_naming_each_field_and_both_values():
    report = forbidden_report().model_copy(update={"score": 4.0, "forbidden": []})
    message = refused(report)
    assert "score is 4 but its checks add up to 0" in message
    assert ("forbidden is missing torch.nn.functional.scaled_dot_product_attention but checks[0] (a) records a "
            "call to it") in message


@pytest.mark.parametrize("change, named", [
    (lambda r: r.checks[0].__setattr__("score", 2.0), "checks[0] (a).score is 2 but a failed check earns 0"),
    (lambda r: r.checks[1].__setattr__("status", Status.PASSED), "checks[1] (b).score is 0 but a passed check earns 2"),
    (lambda r: r.__setattr__("max_score", 2.0), "max_score is 2 but its checks add up to 4"),
    (lambda r: r.checks[0].__setattr__("max_score", -1.0), "checks[0] (a).max_score is -1 but points are a finite"),
    (lambda r: r.__setattr__("checks", []), "checks is empty but a graded report has at least one check"),
])
def test_each_derived_field_that_disagrees_is_named(change, named):
    report = forbidden_report()
    change(report)
    assert named in refused(report)


def test_a_passed_check_the_nets_saw_something_in_is_refused():
    report = graded(check("a", tampered=["sys.setprofile"]), findings=[Finding(
        kind=FindingKind.TAMPERING, what="sys.setprofile", where="test_x.py::a", how="runtime")])
    assert "checks[0] (a).status is passed but the sandbox saw tampering during it" in refused(report)
    static = graded(check("a"), findings=[Finding(kind=FindingKind.TAMPERING, what="gc", where="attention.py:3")])
    assert "the report records tampering, which leaves no credit" in refused(static)


def test_a_not_graded_report_that_claims_points_is_refused():
    report = Report(exercise="x", graded=False, not_graded_reason="engine down", score=3.0)
    assert "score is 3 but a report that was not graded scores 0" in refused(report)


def test_a_candidates_copy_reads_back_though_hidden_checks_are_renamed():
    report = forbidden_report()
    report.checks[0].visibility = Visibility.HIDDEN
    copy = for_audience(report, "candidate")
    assert report_from_json(copy.to_json()) == copy


def test_flags_are_computed_from_the_checks_and_findings_in_a_fixed_order():
    report = forbidden_report()
    report.findings = [Finding(kind=FindingKind.PRIVATE_TORCH, what="torch._C", where="attention.py:1")]
    assert report_flags(report) == ["forbidden", "private_torch", "timeout"]
    assert report_flags(graded(check("a"), check("b", Status.ERROR))) == ["error"]
    assert report_flags(Report(exercise="x", graded=False)) == []


def test_the_whole_decision_is_compared_not_only_check_statuses():
    honest = forbidden_report()
    forged = forbidden_report()
    forged.forbidden = []  # the flag dropped, every check as it was
    assert decision_differences(honest, forged, sides=("recorded", "regraded")) == [
        "flags: forbidden timeout vs timeout",
        "forbidden: api=torch.nn.functional.scaled_dot_product_attention how=runtime where=test_x.py::a "
        "check=test_x.py::a only in the recorded report"]
    points = forbidden_report()
    points.checks[1].max_score, points.max_score = 3.0, 5.0  # the same statuses, other points
    assert decision_differences(honest, points) == ["max_score: 4 vs 5", "b [test_x.py::b]: timeout 0/2 vs timeout 0/3 ()"]
    assert decision_differences(honest, forbidden_report()) == []


def test_a_stored_report_round_trips_through_json_text():
    text = forbidden_report().to_json()
    data = json.loads(text)
    data["score"] = 4
    with pytest.raises(ValueError, match="score is 4"):  # a ValueError, as pydantic's errors are
        report_from_json(json.dumps(data))
