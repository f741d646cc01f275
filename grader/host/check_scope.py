"""Which of an exercise's checks a grading runs: all of them, or the visible ones only (a practice run).

A practice run (``grader serve``'s "Run checks") shows a candidate how the visible checks
go without spending the time of the hidden ones. The hidden checks are left out of the
judge's pytest with ``--deselect`` (their ids come from the catalog's cache of collected
checks); a hidden id that is a prefix of a visible one (``--deselect`` matches prefixes)
is run instead, after every visible check as always, and dropped from the report, so no
visible check is ever lost. The report says it holds the visible checks only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from grader.errors import InfraError
from grader.exercise import Exercise
from grader.reports.model import Report, Visibility, total
from grader.reports.warning import ReportWarning, WarningCode

Checks = Literal["all", "visible"]
CHECKS: tuple[str, ...] = ("all", "visible")


@dataclass(frozen=True)
class CheckScope:
    everything: bool
    pytest_args: tuple[str, ...] = ()
    hidden_points: float = 0.0

    @classmethod
    def of(cls, ex: Exercise, checks: Checks) -> "CheckScope":
        if checks not in CHECKS:
            raise ValueError(f"checks must be one of {', '.join(CHECKS)}, got {checks!r}")
        if checks == "all":
            return cls(True)
        from grader.host.collected import CollectionFailed, cached_checks

        try:
            specs = cached_checks(ex)
        except CollectionFailed as e:  # not graded, and why: never a practice run that silently runs everything
            raise InfraError(f"the exercise's checks could not be collected: {e}") from None
        visible = [s.id for s in specs if s.visibility is Visibility.VISIBLE]
        hidden = [s for s in specs if s.visibility is not Visibility.VISIBLE]
        left_out = [s.id for s in hidden if not any(v.startswith(s.id) for v in visible)]
        return cls(False, tuple(arg for check in left_out for arg in ("--deselect", check)),
                   sum(s.points for s in hidden))

    def narrow(self, report: Report) -> Report:
        """``report`` as this scope shows it: every check for a full grading; for a practice run, the visible
        checks only, the score theirs, and a warning saying the hidden checks were not run. A new report."""
        if self.everything:
            return report
        checks = [c for c in report.checks if c.visibility is Visibility.VISIBLE]
        note = ReportWarning(code=WarningCode.VISIBLE_ONLY,
                             message=f"visible checks only: the hidden checks ({self.hidden_points:g} points) were not "
                                     "run; they are graded when the answer is handed in")
        update: dict = {"checks": checks, "warnings": [*report.warnings, note], "diagnosis": [], "follow_ups": []}
        if report.graded:
            update["score"], update["max_score"] = total(checks)
        return report.model_copy(update=update)
