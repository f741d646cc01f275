"""Credit, decided in the judge from the subset check; the sandbox's nets can only take it away.

The rules, in order (the first that applies gives its message): 1. a source the judge cannot parse:
every check "not run", the parse error told once; 2. a source outside the subset, or naming a
forbidden *package*: the file never ran, every check "not run", 0 points; 3. the runtime subset
refused an operation, or 4. the sandbox's nets saw tampering, during any check: no credit for any
check; 5. a forbidden API in the source that the runtime recorded in *no* check: no credit for any
check (dead code and a hidden call look alike; the message says to remove it); 6. a check during
which the runtime recorded a forbidden API gets none. Nothing that breaks the contract earns full marks.
"""

from __future__ import annotations

from grader.subset.audit import SourceAudit
from grader.reports.model import (NOT_RUN_MESSAGE, CheckResult, Finding, FindingKind, ForbiddenHit, GuardReason,
                                  LoadError, Report, Status, Violation, ViolationCode)

#: A check's message when the judge refused to run the file (rule 2): the violations are listed once, below.
SUBSET_NOT_RUN = "not run: the file leaves its exercise's language subset (the violations are listed with the report)"
#: The runtime subset's refusal, in the judge's words (never the sandbox's text: it could quote a hidden input):
#: what was refused, and how to write it instead. The reason is read from the refusal's type.
GUARD_TEXT = "the sandbox's runtime subset refused an operation during a check"
#: Each reason: what was refused, and how to write it instead.
GUARD_REASONS = {
    GuardReason.NAME: ("a name computed at run time that the subset refuses when written out (a dunder off its list, "
                       "a frame's internals, a dispatch switch, or a forbidden API's name)", "write the attribute out"),
    GuardReason.PRIVATE: ("a private attribute (a name starting with `_`) of an object your code did not create "
                          "(torch's, the standard library's or the grader's)",
                          "use its public API instead, e.g. `named_children()` for `_modules`, the handle "
                          "`register_forward_hook` returns for `_forward_hooks`, `get_last_lr()` for `_last_lr`"),
    GuardReason.MODULE: ("a module, or a member of one, outside this exercise's subset, reached through another value",
                         "import what you use by name, from the modules the prompt allows"),
    GuardReason.VALUE: ("a frame, a code object, a module's namespace, or a function that runs code or starts "
                        "programs", "none of them is part of the subset: remove the code that reaches it"),
    GuardReason.FORBIDDEN: ("a forbidden API, reached under another name", "write the computation yourself"),
    GuardReason.WRITE: ("a change to code your file did not write (an attribute of a torch or standard-library "
                        "class, function or module) or to a module's namespace", "subclass or wrap it instead"),
    GuardReason.IMPORT: ("an import outside the subset", "import at the top of the file what the prompt allows"),
    GuardReason.OPEN: ("a file under /proc, /sys or /dev", "open only the files the exercise gives you"),
}


def guard_violation(refused: list[CheckResult], audit: SourceAudit) -> Violation:
    """The judge's words for a runtime refusal (the first check's reason): what, where in the file a private name is
    read from something other than ``self`` (the audit's own reading of the source), and the fix."""
    reason = refused[0].guard_reason
    what, fix = GUARD_REASONS.get(reason, ("an operation outside the exercise's subset", "see the prompt's \"What "
                                                                                        "your file may use\""))
    lines = ", ".join(f"line {line} `.{name}`" for line, name in audit.private_reads[:5])
    where = f" (your file reads private attributes of other objects at {lines})" \
        if reason is GuardReason.PRIVATE and lines else ""
    more = f" (in {len(refused)} checks; the first is named)" if len(refused) > 1 else ""
    return Violation(code=ViolationCode.GUARD, how="runtime", check=refused[0].id, text=f"{GUARD_TEXT}: {what}{where}"
                     f"{more}", fix=fix)


def apply(report: Report, audit: SourceAudit) -> Report:
    """``report`` with the audit and the runtime nets' findings recorded, and credit taken where the rules say:
    a new report (its checks new where a rule changed them); ``report`` itself is left as it is."""
    runtime_hits = [ForbiddenHit(api=api, how="runtime", where=c.id, check=c.id) for c in report.checks
                    for api in c.forbidden]
    runtime_tampering = [Finding(kind=FindingKind.TAMPERING, what=what, where=c.id, how="runtime")
                         for c in report.checks for what in c.tampered]
    refused = [c for c in report.checks if c.guard_refused]
    guard = [guard_violation(refused, audit)] if refused else []
    findings = [*(f for f in report.findings if f.how != "runtime"), *runtime_tampering]
    update = {"forbidden": [*audit.forbidden, *runtime_hits], "findings": findings,
              "violations": [*audit.violations, *guard]}
    # A check error is the grader's own bug: it stays one (the grading is not graded), whatever else holds.
    kept = (Status.SKIPPED, Status.CHECK_ERROR)
    if not audit.parsed:
        # The judge's own parse outranks what the sandbox said.
        update["load_error"] = audit.load_error or LoadError(found="source",
                                                             summary="the judge could not parse the file")
        update["checks"] = [c if c.status in kept else mark_not_run(c) for c in report.checks]
    elif audit.blocking:
        reason = not_run_reason(audit)
        update["checks"] = [c if c.status in kept else mark_not_run(c, reason) for c in report.checks]
    else:
        everywhere = _reason_for_every_check(audit, findings, runtime_hits, guard)
        penalty = "subset" if guard else "tampering" if any(f.kind is FindingKind.TAMPERING for f in findings) \
            else "forbidden"
        def decided(check: CheckResult) -> CheckResult:
            reason = everywhere or _runtime_reason(check)
            return _no_credit(check, reason, penalty) if reason and check.status not in kept else check

        update["checks"] = [decided(c) for c in report.checks]
    return report.model_copy(update=update)


def not_run_reason(audit: SourceAudit) -> str:
    """Each check's message when the judge refuses to run the file (rule 2)."""
    return SUBSET_NOT_RUN if audit.violations else _package_reason(audit)


def subset_load_error(audit: SourceAudit) -> LoadError:
    """Why nothing ran, told once at the top of the report, when the judge refused to run the file (rule 2):
    the judge's own words and counts, the violations themselves listed with their lines on the report."""
    if audit.violations:
        n = len(audit.violations)
        first = audit.violations[0]
        return LoadError(found="subset", line=first.line,
                         summary=f"the file leaves its exercise's language subset ({n} violation{'s' if n != 1 else ''},"
                                 " each with how to write it instead): it was not run")
    used = [h for h in audit.forbidden if h.api in audit.packages]
    return LoadError(found="subset", summary=f"the file uses forbidden {_names(used)}, a whole package: it was not run")


def _package_reason(audit: SourceAudit) -> str:
    used = [h for h in audit.forbidden if h.api in audit.packages]
    return f"not run: the file uses forbidden {_names(used)}, a whole package: no credit for any check"


def _reason_for_every_check(audit: SourceAudit, findings: list[Finding], runtime_hits: list[ForbiddenHit],
                            guard: list[Violation]) -> str | None:
    if guard:
        # Not the check's id: this message lands on visible checks too, and a hidden check's id can hold its
        # inputs. The violations list names the check, redacted for a candidate like everything else.
        return f"{GUARD_TEXT} (listed with the report): the file leaves its exercise's language subset; no credit " \
               "for any check"
    tampering = [f for f in findings if f.kind is FindingKind.TAMPERING]
    if tampering:
        more = f" (and {len(tampering) - 1} more)" if len(tampering) > 1 else ""
        return (f"the sandbox's nets saw the submission tamper with the grader during a check: "
                f"{tampering[0].what}{more}: no credit for any check")
    recorded = {h.api for h in runtime_hits}
    unseen = [h for h in audit.forbidden if h.api not in recorded]
    if unseen:
        return (f"the source references forbidden {_names(unseen)}, which no check saw called: the judge cannot "
                "tell unused code from a call that hid from the sandbox's net, so no check gets credit; remove "
                "the reference")
    return None


def _runtime_reason(check: CheckResult) -> str | None:
    if check.forbidden:
        return f"used forbidden API {', '.join(check.forbidden)}: no credit for this check"
    return None


def _names(hits: list[ForbiddenHit]) -> str:
    seen: dict[str, ForbiddenHit] = {}
    for h in hits:
        seen.setdefault(h.api, h)
    return ", ".join(f"{h.api} ({f'as {h.via}, ' if h.via else ''}line {h.line if h.line is not None else '?'})"
                     for h in seen.values())


def _no_credit(check: CheckResult, reason: str, penalty: str) -> CheckResult:
    """``check`` with no credit, for ``reason`` (its own message kept after it): a new check."""
    message = reason + (f" ({check.message})" if check.message and check.message != reason else "")
    return check.model_copy(update={"message": message, "status": Status.FAILED, "score": 0.0, "penalty": penalty})


def mark_not_run(check: CheckResult, message: str = NOT_RUN_MESSAGE) -> CheckResult:
    """``check`` with no credit, and nothing per check: what it would repeat is told once on the report
    (``load_error``, ``violations``). A new check; ``check`` itself is left as it is."""
    return check.model_copy(update={"status": Status.ERROR, "score": 0.0, "message": message, "not_run": True,
                                    "details": "", "counterexample": None, "output": "",
                                    "output_truncated": False, "said": None, "said_as": None, "trace": None,
                                    "probe": None})
