"""The judge's credit rules (grader.host.decision), on reports built by hand: no sandbox needed."""

import pytest

from grader.host import decision
from grader.subset.audit import SourceAudit
from grader.reports.model import (GuardReason, NOT_RUN_MESSAGE, CheckResult, Finding, FindingKind, ForbiddenHit, Report, Status,
                                  Violation, ViolationCode, Visibility, total)
from grader.reports.derived import report_from_json

SDPA = "torch.nn.functional.scaled_dot_product_attention"


def check(name, status=Status.PASSED, *, forbidden=(), tampered=(), guard_refused=False, visibility=None,
          guard_reason=None):
    return CheckResult(id=f"test_x.py::{name}", name=name, status=status, score=1.0 if status is Status.PASSED else 0,
                       max_score=1.0, visibility=visibility or Visibility.VISIBLE, forbidden=list(forbidden),
                       tampered=list(tampered), guard_refused=guard_refused, guard_reason=guard_reason)


def decide(checks, audit=None):
    report = Report(exercise="attention", graded=True, checks=checks)
    report = decision.apply(report, audit or SourceAudit())
    score, max_score = total(report.checks)
    return report.model_copy(update={"score": score, "max_score": max_score})


def static(api=SDPA, line=7, via=""):
    return ForbiddenHit(api=api, how="static", where=f"attention.py:{line}", via=via, line=line)


def violation(code=ViolationCode.MODULE_VALUE, line=3):
    return Violation(code=code, text="the module `torch.nn` used as a value", line=line, column=4)


def test_an_honest_report_keeps_its_score():
    report = decide([check("a"), check("b", Status.FAILED)])
    assert report.score == 1 and report.findings == [] and report.forbidden == [] and report.violations == []


def test_a_violation_leaves_every_check_not_run_and_is_named_with_its_line():
    report = decide([check("a"), check("b"), check("gpu", Status.SKIPPED)], SourceAudit(violations=[violation()]))
    assert report.score == 0 and report.violations[0].line == 3
    counted = [c for c in report.checks if c.status is not Status.SKIPPED]
    assert all(c.not_run and c.message == decision.SUBSET_NOT_RUN for c in counted)
    assert report.checks[-1].status is Status.SKIPPED  # not run, not counted


def test_a_forbidden_package_leaves_every_check_not_run_and_names_the_package():
    audit = SourceAudit(forbidden=[static("torch.utils.checkpoint", 10)], packages=["torch.utils.checkpoint"])
    report = decide([check("a"), check("b")], audit)
    assert report.score == 0 and all(c.not_run for c in report.checks)
    assert "forbidden torch.utils.checkpoint (line 10)" in report.checks[0].message


def test_the_guard_refusing_a_name_in_a_check_costs_every_check_in_the_judges_words():
    report = decide([check("a"), check("b", guard_refused=True, visibility=Visibility.HIDDEN)])
    assert report.score == 0
    [v] = report.violations
    assert (v.code, v.how, v.check, v.line) == (ViolationCode.GUARD, "runtime", "test_x.py::b", None)
    assert v.text == f"{decision.GUARD_TEXT}: an operation outside the exercise's subset"
    # Every check carries the message, visible ones too: a hidden check's id (its inputs) is not in it.
    assert all("test_x.py::b" not in c.message and decision.GUARD_TEXT in c.message for c in report.checks)


@pytest.mark.parametrize("reason", list(GuardReason))
def test_every_runtime_refusal_is_told_in_the_judges_words_with_its_fix(reason):
    """What was refused and how to write it instead: a reason the judge has no words for would read as a bare
    refusal. A private name names the lines of the file that read one from something other than self."""
    audit = SourceAudit(private_reads=[(12, "_forward_hooks"), (30, "_modules")])
    [v] = decide([check("a", guard_refused=True, guard_reason=reason)], audit).violations
    what, fix = decision.GUARD_REASONS[reason]
    assert v.text.startswith(f"{decision.GUARD_TEXT}: {what}") and v.fix == fix
    assert ("line 12 `._forward_hooks`, line 30 `._modules`" in v.text) == (reason is GuardReason.PRIVATE)


def test_the_guard_in_several_checks_is_one_violation():
    report = decide([check("a", guard_refused=True), check("b", guard_refused=True)])
    [v] = report.violations
    assert "in 2 checks" in v.text and v.check == "test_x.py::a"


def test_tampering_the_sandbox_saw_costs_every_check_and_becomes_a_finding():
    report = decide([check("a"), check("b", tampered=["the watch was taken off"])])
    assert report.score == 0
    [f] = report.findings
    assert (f.kind, f.how, f.where) == (FindingKind.TAMPERING, "runtime", "test_x.py::b")
    assert all("test_x.py::b" not in c.message for c in report.checks)


def test_a_forbidden_reference_costs_the_checks_where_the_runtime_saw_it():
    report = decide([check("a", forbidden=[SDPA]), check("b")], SourceAudit(forbidden=[static()]))
    assert [c.status for c in report.checks] == [Status.FAILED, Status.PASSED]
    assert report.score == 1 and SDPA in report.checks[0].message
    assert [(h.how, h.where) for h in report.forbidden] == [("static", "attention.py:7"), ("runtime", "test_x.py::a")]


def test_a_forbidden_reference_no_check_saw_costs_every_check():
    """Dead code or a call that hid from the net: the judge cannot tell them apart."""
    report = decide([check("a"), check("b")], SourceAudit(forbidden=[static("torch.clamp", via=".clamp")]))
    assert report.score == 0
    message = report.checks[0].message
    assert "torch.clamp (as .clamp, line 7)" in message and "remove the reference" in message


def test_the_runtime_alone_can_take_credit_but_never_give_it():
    report = decide([check("a", forbidden=["torch.mul"]), check("b")])
    assert [c.status for c in report.checks] == [Status.FAILED, Status.PASSED]
    failed = decide([check("a", Status.FAILED)], SourceAudit(forbidden=[static()]))
    assert failed.checks[0].status is Status.FAILED and failed.score == 0


def test_a_source_the_judge_cannot_parse_gets_no_credit():
    report = decide([check("a")], SourceAudit(parsed=False))
    assert report.score == 0 and report.checks[0].not_run and report.load_error.found == "source"


def test_a_syntax_error_is_told_once_with_its_line_and_every_check_is_not_run():
    from grader.subset.audit import audit_source

    audit = audit_source("import torch\nfoo = (1,\n", filename="attention.py")
    failed = check("a").model_copy(update={"status": Status.FAILED, "score": 0.0, "message": "SyntaxError ...",
                                           "counterexample": "Failing explicit example: test_a(case=1)"})
    report = decide([failed, check("b")], audit)
    assert report.load_error.summary == "SyntaxError: '(' was never closed" and report.load_error.line == 2
    assert 'File "attention.py", line 2' in report.load_error.traceback
    assert [(c.status, c.not_run, c.message, c.counterexample) for c in report.checks] == \
        [(Status.ERROR, True, NOT_RUN_MESSAGE, None)] * 2 and report.score == 0


@pytest.mark.parametrize("audience", ["candidate", "panel"])
def test_a_runtime_violation_names_a_hidden_check_only_by_its_safe_name(audience):
    from grader.reports.redact import for_audience

    hidden = check("rows[918273-True]", guard_refused=True, visibility=Visibility.HIDDEN)
    report = for_audience(decide([check("a"), hidden]), audience)
    shown = report.violations[0].check
    assert ("918273" in shown) == (audience == "panel")


def test_old_reports_without_findings_or_violations_still_load():
    old = Report(exercise="attention", graded=True, checks=[check("a")], score=1, max_score=1).model_dump(mode="json")
    old.pop("findings")
    old.pop("violations")
    for c in old["checks"]:
        c.pop("tampered")
        c.pop("guard_refused")
    import json

    back = report_from_json(json.dumps(old))
    assert back.findings == [] and back.violations == [] and back.checks[0].tampered == []


def test_findings_of_old_reports_keep_their_kinds():
    """Reports stored before issue 25 carry dynamic-access and private-torch flags: they still load and render."""
    report = Report(exercise="attention", graded=True, checks=[check("a")], score=1, max_score=1,
                    findings=[Finding(kind=FindingKind.DYNAMIC_ACCESS, what="getattr(torch, <computed name>)",
                                      where="attention.py:3")])
    from grader.reports.scorecard import scorecard_view

    view = scorecard_view(report_from_json(report.to_json()), audience="panel")
    assert [f.label for f in view.findings] == ["dynamic access"]


@pytest.mark.parametrize("audit", [
    SourceAudit(),  # the runtime's hits and tampering take credit (rules 4 and 6)
    SourceAudit(violations=[violation()]),  # every check not run (rule 2)
    SourceAudit(parsed=False),  # the judge could not parse it (rule 1)
], ids=["credit taken", "not run", "unparsed"])
def test_the_decision_returns_a_new_report_and_leaves_the_one_it_was_given_as_it_was(audit):
    """Issue 28: the report is built from values each stage returns, never edited in place; before, the decision
    rewrote the checks of the report it was handed, so what a report said depended on who held it last."""
    given = Report(exercise="attention", graded=True, checks=[
        check("a", forbidden=[SDPA]), check("b", tampered=["sys.setprofile"]), check("c", Status.FAILED),
        check("gpu", Status.SKIPPED)])
    before = given.model_dump()
    decided = decision.apply(given, audit)
    assert given.model_dump() == before
    assert decided is not given and decided.model_dump() != before
    changed = [c for c, was in zip(decided.checks, given.checks) if c.model_dump() != was.model_dump()]
    assert changed and all(c.score == 0 for c in changed)
    assert decided.checks[-1] is given.checks[-1]  # a skipped check is kept as it was


def test_marking_a_check_not_run_and_taking_its_credit_each_return_a_new_check():
    given = check("a")
    before = given.model_dump()
    not_run, no_credit = decision.mark_not_run(given), decision._no_credit(given, "a reason", "forbidden")
    assert given.model_dump() == before
    assert (not_run.status, not_run.not_run, not_run.score) == (Status.ERROR, True, 0.0)
    assert (no_credit.status, no_credit.penalty, no_credit.message) == (Status.FAILED, "forbidden", "a reason")
