"""What a report says that follows from its checks: computed, never believed.

A report's headline (score, max score, its flags) is a function of its per-check
results and findings. A stored copy holds the headline too, for readers that want
one number, and anyone who can write the file can change it without touching the
checks; a scorecard, the batch's CSV or a regrade that believed it would then show
22/22 for a real 0/22. So every reader goes through :func:`edits` (:func:`report_from_json`
calls it): a report whose stored headline disagrees with what its checks say is
refused as edited, naming the field and both values.

Flags are never stored in a report at all: :func:`report_flags` computes them from
the checks and findings each time, so nothing can hold a flag that disagrees.

What is derived, and so checked here:

- a check's points: full points when it passed, none otherwise (checks are pass/fail; a
  partial-credit rule would be written here, once);
- the report's score and max score: the sums over the checks that were not skipped;
- a not-graded report: no score; a graded one: at least one check;
- what the sandbox's nets saw during a check (a forbidden call, tampering): that check
  has no credit, and (in the panel's copy) the report's lists carry it, so its flag cannot
  be dropped alone;
- tampering anywhere: no check has credit (``grader.host.decision``).

What is not derived cannot be checked from the report alone (a consistent forgery of
statuses, scores and findings together): that is what signatures
(``grader.evidence.signing``) and ``grader regrade`` are for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from grader.reports.model import CheckResult, FindingKind, Report, Status, total


@dataclass(frozen=True)
class Edit:
    """One stored field that disagrees with what the report's checks say it must be."""

    field: str  # "score", "checks[3].score", "forbidden", ...
    stored: str
    derived: str

    def __str__(self) -> str:
        return f"{self.field} is {self.stored} but {self.derived}"


class EditedReport(ValueError):
    """A stored report whose headline disagrees with its own checks: edited after the grader wrote it.

    A ``ValueError`` (as pydantic's ``ValidationError`` is), so every reader that refuses a
    malformed report refuses this one too; the message names each field and both values.
    """

    def __init__(self, edits: list[Edit]):
        self.edits = edits
        super().__init__("the report was edited: " + "; ".join(map(str, edits)))


def report_flags(report: Report) -> list[str]:
    """What a panel should look at twice, in a fixed order: ``check_error`` (the grader's own bug: nothing
    else is said of such a report), ``forbidden``, ``subset`` (violations of the language subset), the findings' kinds (``tampering``, ``dynamic_access``,
    ``private_torch``), ``timeout``, ``error``, ``skipped`` (checks not run: left out of the score),
    ``check_counted`` (a check's own code raised on this answer but not on the reference's: counted as a
    failure, grader.host.arbitration) and ``not_isolated`` (graded in the local sandbox).

    The one function that makes a report's flags; a report that was not graded has none (but a check
    error's), and the untouched stub none but ``not_isolated`` (its "crashes" are the stub's own).
    """
    if report.check_errors:
        return ["check_error"]
    if not report.graded:
        return []
    local = ["not_isolated"] if report.environment.sandbox == "local" else []
    if report.untouched_stub:
        return local
    flags = ["forbidden"] if report.forbidden else []
    if report.violations:
        flags.append("subset")
    flags += [kind.value for kind in FindingKind if any(f.kind is kind for f in report.findings)]
    statuses = {c.status for c in report.checks}
    flags += [s.value for s in (Status.TIMEOUT, Status.ERROR, Status.SKIPPED) if s in statuses]
    if any(c.check_error is not None for c in report.checks):
        flags.append("check_counted")
    return flags + local


def check_points(check: CheckResult) -> float:
    """The points a check earns from its status: all of them when it passed, none otherwise."""
    return check.max_score if check.status is Status.PASSED else 0.0


def edits(report: Report) -> list[Edit]:
    """Every stored field of ``report`` that disagrees with what its checks and findings make it."""
    if not report.graded:  # no score is shown or counted for it; one that claims points was edited
        return [Edit("score", _n(report.score), "a report that was not graded scores 0")] if report.score else []
    if not report.checks:
        return [Edit("checks", "empty", "a graded report has at least one check (none collected is not graded)")]
    found = []
    tampering = [f for f in report.findings if f.kind is FindingKind.TAMPERING]
    runtime_hits = {(h.api, h.where) for h in report.forbidden if h.how == "runtime"}
    runtime_tampering = {(f.what, f.where) for f in tampering if f.how == "runtime"}
    for n, c in enumerate(report.checks):
        where = f"checks[{n}] ({c.name or c.id})"
        if c.max_score < 0 or not math.isfinite(c.max_score):
            found.append(Edit(f"{where}.max_score", _n(c.max_score), "points are a finite number >= 0"))
            continue
        if not _same(c.score, check_points(c)):
            found.append(Edit(f"{where}.score", _n(c.score), f"a {c.status.value} check earns {_n(check_points(c))}"))
        if c.status is Status.PASSED and (c.forbidden or c.tampered or tampering):
            why = ("the sandbox saw a forbidden call during it" if c.forbidden else
                   "the sandbox saw tampering during it" if c.tampered else "the report records tampering")
            found.append(Edit(f"{where}.status", "passed", f"{why}, which leaves no credit"))
        if report.audience == "panel":  # a candidate's copy renames hidden checks in these lists (grader.reports.redact)
            found += [Edit("forbidden", "missing " + api, f"{where} records a call to it") for api in c.forbidden
                      if (api, c.id) not in runtime_hits]
            found += [Edit("findings", "missing " + what, f"{where} records tampering with it") for what in c.tampered
                      if (what, c.id) not in runtime_tampering]
    return _headline(report) + found


def _headline(report: Report) -> list[Edit]:
    score, max_score = total(report.checks)
    return [Edit(name, _n(stored), f"its checks add up to {_n(derived)}")
            for name, stored, derived in (("score", report.score, score), ("max_score", report.max_score, max_score))
            if not _same(stored, derived)]


def require_consistent(report: Report) -> Report:
    """``report`` itself, or :class:`EditedReport` naming what disagrees with its checks."""
    found = edits(report)
    if found:
        raise EditedReport(found)
    return report


def report_from_json(text: str) -> Report:
    """A stored report (JSON), refused (:class:`EditedReport`, a ``ValueError``) when its headline disagrees
    with its own checks: score, max score and flags are recomputed, never believed."""
    return require_consistent(Report.model_validate_json(text))


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _n(value: float) -> str:
    return f"{value:g}"
