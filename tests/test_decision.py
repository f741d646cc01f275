"""The judge's credit rules (grader.judge.decision), on reports built by hand: no sandbox needed."""

import pytest

from grader.judge import decision
from grader.judge.audit import SourceAudit
from grader.reports.model import (NOT_RUN_MESSAGE, CheckResult, Finding, FindingKind, ForbiddenHit, Report, Status,
                                  Visibility, total)

SDPA = "torch.nn.functional.scaled_dot_product_attention"


def check(name, status=Status.PASSED, *, forbidden=(), tampered=()):
    return CheckResult(id=f"test_x.py::{name}", name=name, status=status, score=1.0 if status is Status.PASSED else 0,
                       max_score=1.0, visibility=Visibility.VISIBLE, forbidden=list(forbidden),
                       tampered=list(tampered))


def decide(checks, audit=None, packages=()):
    report = Report(exercise="attention", graded=True, checks=checks)
    decision.apply(report, audit or SourceAudit(), packages=set(packages))
    report.score, report.max_score = total(report.checks)
    return report


def static(api=SDPA, line=7, via=""):
    return ForbiddenHit(api=api, how="static", where=f"attention.py:{line}", via=via)


def finding(kind, what="x", line=3):
    return Finding(kind=kind, what=what, where=f"attention.py:{line}")


def test_an_honest_report_keeps_its_score():
    report = decide([check("a"), check("b", Status.FAILED)])
    assert report.score == 1 and report.findings == [] and report.forbidden == []


def test_tampering_in_the_source_costs_every_check_and_names_the_line():
    report = decide([check("a"), check("b"), check("gpu", Status.SKIPPED)],
                    SourceAudit(findings=[finding(FindingKind.TAMPERING, "sys.setprofile", 12)]))
    assert report.score == 0
    counted = [c for c in report.checks if c.status is not Status.SKIPPED]
    assert all(c.status is Status.FAILED and "sys.setprofile at line 12" in c.message for c in counted)
    assert report.checks[-1].status is Status.SKIPPED  # not run, not counted


def test_tampering_the_sandbox_saw_costs_every_check_and_becomes_a_finding():
    report = decide([check("a"), check("b", tampered=["the tripwire's torch function mode was taken off"])])
    assert report.score == 0
    [f] = report.findings
    assert (f.kind, f.how, f.where) == (FindingKind.TAMPERING, "runtime", "test_x.py::b")
    assert "seen in the sandbox during a check" in report.checks[0].message
    # Every check carries the message, visible ones too: a hidden check's id (its inputs) is not in it.
    assert all("test_x.py::b" not in c.message for c in report.checks)


def test_a_forbidden_reference_costs_the_checks_where_the_runtime_saw_it():
    report = decide([check("a", forbidden=[SDPA]), check("b")], SourceAudit(forbidden=[static()]))
    assert [c.status for c in report.checks] == [Status.FAILED, Status.PASSED]
    assert report.score == 1 and SDPA in report.checks[0].message
    assert [(h.how, h.where) for h in report.forbidden] == [("static", "attention.py:7"), ("runtime", "test_x.py::a")]


def test_a_forbidden_reference_no_check_saw_costs_every_check():
    """Dead code or a call that hid from the tripwire: the judge cannot tell them apart."""
    report = decide([check("a"), check("b")],
                    SourceAudit(forbidden=[static(via="torch._scaled_dot_product_attention_math")]))
    assert report.score == 0
    message = report.checks[0].message
    assert "as torch._scaled_dot_product_attention_math, line 7" in message and "remove the reference" in message


def test_the_runtime_alone_can_take_credit_but_never_give_it():
    report = decide([check("a", forbidden=["torch.mul"]), check("b")])
    assert [c.status for c in report.checks] == [Status.FAILED, Status.PASSED]
    failed = decide([check("a", Status.FAILED)], SourceAudit(forbidden=[static()]))
    assert failed.checks[0].status is Status.FAILED and failed.score == 0


def test_a_forbidden_package_costs_every_check():
    report = decide([check("a"), check("b")], SourceAudit(forbidden=[static("torch.fft")]), packages=["torch.fft"])
    assert report.score == 0 and "forbidden torch.fft" in report.checks[1].message


@pytest.mark.parametrize("kind", [FindingKind.DYNAMIC_ACCESS, FindingKind.PRIVATE_TORCH])
def test_dynamic_access_and_private_torch_are_flags_only(kind):
    report = decide([check("a"), check("b")], SourceAudit(findings=[finding(kind)]))
    assert report.score == 2 and [f.kind for f in report.findings] == [kind]


def test_a_source_the_judge_cannot_parse_gets_no_credit():
    report = decide([check("a")], SourceAudit(parsed=False))
    assert report.score == 0 and report.checks[0].not_run and report.load_error.found == "source"


def test_a_syntax_error_is_told_once_with_its_line_and_every_check_is_not_run():
    from grader.judge.audit import audit_source

    audit = audit_source("import torch\nfoo = (1,\n", filename="attention.py")
    failed = check("a").model_copy(update={"status": Status.FAILED, "score": 0.0, "message": "SyntaxError ...",
                                           "counterexample": "Failing explicit example: test_a(case=1)"})
    report = decide([failed, check("b")], audit)
    assert report.load_error.summary == "SyntaxError: '(' was never closed" and report.load_error.line == 2
    assert 'File "attention.py", line 2' in report.load_error.traceback
    assert [(c.status, c.not_run, c.message, c.counterexample) for c in report.checks] == \
        [(Status.ERROR, True, NOT_RUN_MESSAGE, None)] * 2 and report.score == 0


def test_old_reports_without_findings_still_load():
    old = Report(exercise="attention", graded=True, checks=[check("a")], score=1, max_score=1).model_dump(mode="json")
    old.pop("findings")
    for c in old["checks"]:
        c.pop("tampered")
    import json

    back = Report.from_json(json.dumps(old))
    assert back.findings == [] and back.checks[0].tampered == []
