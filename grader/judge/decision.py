"""Credit, decided in the judge from the source audit; the sandbox's nets can only take it away.

The rules, in order (the first that applies to a check gives its message):

1. the judge could not parse the source: no check ran the candidate's logic; each is marked
   "not run" and the parse error is told once (``Report.load_error``);
2. tampering anywhere in the source, or seen by the sandbox's nets during any
   check: no check gets credit, and the finding is named with its line;
3. a forbidden *package* referenced in the source: no check gets credit (calls
   into a package cannot be attributed to checks at runtime);
4. a forbidden API referenced in the source that the runtime recorded in *no*
   check: no check gets credit, since the judge cannot tell dead code from a
   call that hid from the tripwire (the message says to remove the reference);
5. a check during which the runtime recorded a forbidden API: that check gets none.

Everything else (dynamic access, private torch) is a flag on the report and
never changes a score.
"""

from __future__ import annotations

from grader.judge.audit import SourceAudit, torch_objects
from grader.reports.model import (NOT_RUN_MESSAGE, CheckResult, Finding, FindingKind, ForbiddenHit, LoadError,
                                  Report, Status)


def apply(report: Report, audit: SourceAudit, *, packages: set[str]) -> None:
    """Record the audit and the runtime nets' findings on ``report`` and take credit where the rules say."""
    runtime_hits = [ForbiddenHit(api=api, how="runtime", where=c.id, check=c.id) for c in report.checks
                    for api in c.forbidden]
    runtime_tampering = [Finding(kind=FindingKind.TAMPERING, what=what, where=c.id, how="runtime")
                         for c in report.checks for what in c.tampered]
    report.forbidden = [*audit.forbidden, *runtime_hits]
    report.findings = [*audit.findings, *runtime_tampering]
    if not audit.parsed:
        # The judge's own parse outranks what the sandbox said.
        report.load_error = audit.load_error or LoadError(found="source", summary="the judge could not parse the file")
        for check in report.checks:
            if check.status not in (Status.SKIPPED, Status.CHECK_ERROR):
                mark_not_run(check)
        return
    everywhere = _reason_for_every_check(audit, report.findings, runtime_hits, packages)
    tampering = any(f.kind is FindingKind.TAMPERING for f in report.findings)
    for check in report.checks:
        reason = everywhere or _runtime_reason(check)
        # A check error is the grader's own bug: it stays one (the grading is not graded), whatever else holds.
        if reason and check.status not in (Status.SKIPPED, Status.CHECK_ERROR):
            _no_credit(check, reason, "tampering" if tampering else "forbidden")


def _reason_for_every_check(audit: SourceAudit, findings: list[Finding], runtime_hits: list[ForbiddenHit],
                            packages: set[str]) -> str | None:
    tampering = [f for f in findings if f.kind is FindingKind.TAMPERING]
    if tampering:
        first = tampering[0]
        line = first.where.rsplit(":", 1)[-1]
        # Not the check's id: this message lands on visible checks too, and a hidden check's id can hold its
        # inputs. The findings list names the check, redacted for a candidate like everything else.
        where = f"at line {line}" if first.how == "static" else "seen in the sandbox during a check"
        more = f" (and {len(tampering) - 1} more)" if len(tampering) > 1 else ""
        return f"the submission tampers with the grader: {first.what} {where}{more}: no credit for any check"
    used = [h for h in audit.forbidden if h.api in packages or torch_objects.is_module(h.api)]
    if used:
        return f"the submission uses forbidden {_names(used)} (found in the source): no credit for any check"
    recorded = {h.api for h in runtime_hits}
    unseen = [h for h in audit.forbidden if h.api not in recorded]
    if unseen:
        return (f"the source references forbidden {_names(unseen)}, which no check saw called: the judge cannot "
                "tell unused code from a call that hid from the tripwire, so no check gets credit; remove the "
                "reference")
    return None


def _runtime_reason(check: CheckResult) -> str | None:
    if check.forbidden:
        return f"used forbidden API {', '.join(check.forbidden)}: no credit for this check"
    return None


def _names(hits: list[ForbiddenHit]) -> str:
    seen: dict[str, ForbiddenHit] = {}
    for h in hits:
        seen.setdefault(h.api, h)
    return ", ".join(f"{h.api} ({f'as {h.via}, ' if h.via else ''}line {h.where.rsplit(':', 1)[-1]})"
                     for h in seen.values())


def _no_credit(check: CheckResult, reason: str, penalty: str) -> None:
    check.message = reason + (f" ({check.message})" if check.message and check.message != reason else "")
    check.status, check.score, check.penalty = Status.FAILED, 0.0, penalty


def mark_not_run(check: CheckResult) -> None:
    """No credit, and nothing per check: what it would repeat is the report's one ``load_error``."""
    check.status, check.score, check.message, check.not_run = Status.ERROR, 0.0, NOT_RUN_MESSAGE, True
    check.details, check.counterexample = "", None
