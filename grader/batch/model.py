"""One row of a batch: what happened to one (candidate, exercise).

Every row the panel sees has a status, and a status other than ``graded`` always
comes with a reason a person can act on. Scores exist only for graded rows and
for files that cannot count (empty, not Python); a row the infrastructure failed
has no score at all, so it can never be mistaken for a zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from urllib.parse import quote

from grader.batch.outdir import CANDIDATES
from grader.reports.model import FindingKind, Report, Status


class RowStatus(str, Enum):
    GRADED = "graded"
    NOT_GRADED = "not_graded"  # infrastructure failed, retries spent: rerun the batch
    MISSING = "missing"  # the candidate has no file for this exercise
    EMPTY = "empty"  # the file is empty or whitespace: scored 0
    INVALID = "invalid"  # the file is not valid Python: scored 0
    UNREADABLE = "unreadable"  # the file could not be read (broken link, permissions, not a file)
    AMBIGUOUS = "ambiguous"  # several .py files and none has the exercise's file name
    UNKNOWN_EXERCISE = "unknown_exercise"  # the folder names no exercise we know

    @property
    def scored(self) -> bool:
        """Whether a row with this status carries a score (0 for files that cannot count)."""
        return self in (RowStatus.GRADED, RowStatus.EMPTY, RowStatus.INVALID)


@dataclass
class Row:
    candidate: str
    exercise: str
    status: RowStatus
    score: float | None = None
    max_score: float | None = None
    reason: str = ""
    report: Report | None = None
    sha256: str | None = None
    source: str | None = None  # the submission's path relative to SUBMISSIONS
    attempts: int = 0
    flags: list[str] = field(default_factory=list)  # filled by flags_for() and the similarity pass

    @property
    def scorecard(self) -> str | None:
        """Relative URL of this row's HTML scorecard in the output folder, if it has one."""
        if self.report is None:
            return None
        return f"{CANDIDATES}/{quote(self.candidate)}/{quote(self.exercise)}.html"


def flags_for(report: Report | None) -> list[str]:
    """What a panel should look at twice: forbidden APIs, violations of the language subset, the sandbox's
    findings (tampering), timeouts, crashes/errors."""
    if report is None or not report.graded:
        return []
    flags = []
    if report.forbidden:
        flags.append("forbidden")
    if report.violations:
        flags.append("subset")
    flags += [kind.value for kind in FindingKind if any(f.kind is kind for f in report.findings)]
    statuses = {c.status for c in report.checks}
    if Status.TIMEOUT in statuses:
        flags.append("timeout")
    if Status.ERROR in statuses:
        flags.append("error")
    return flags
