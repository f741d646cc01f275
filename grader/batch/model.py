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
from grader.batch.provenance import Provenance
from grader.batch.similarity import PublishedMatch
from grader.reports.derived import report_flags
from grader.reports.model import Report


class RowStatus(str, Enum):
    GRADED = "graded"
    NOT_GRADED = "not_graded"  # infrastructure failed, retries spent: rerun the batch
    MISSING = "missing"  # the candidate has no file for this exercise
    EMPTY = "empty"  # the file is empty or whitespace: scored 0
    INVALID = "invalid"  # the file is not valid Python: scored 0
    UNTOUCHED_STUB = "untouched_stub"  # the exercise's stub byte for byte: nothing attempted, scored 0
    CHECK_ERROR = "check_error"  # a check's own code raised (a bug in the grader's checks): no score
    UNREADABLE = "unreadable"  # the file could not be read (broken link, permissions, not a file)
    AMBIGUOUS = "ambiguous"  # several .py files and none has the exercise's file name
    UNKNOWN_EXERCISE = "unknown_exercise"  # the folder names no exercise we know

    @property
    def scored(self) -> bool:
        """Whether a row with this status carries a score (0 for files that cannot count)."""
        return self in (RowStatus.GRADED, RowStatus.EMPTY, RowStatus.INVALID, RowStatus.UNTOUCHED_STUB)


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
    published: PublishedMatch | None = None  # the published answer this submission nearly is (similarity pass)
    provenance: Provenance | None = None  # the hand-in record beside the graded file, checked (grader collect)

    @property
    def sandbox(self) -> str | None:
        """Where it was graded: ``docker``, ``docker (runsc)`` or ``local`` (not isolated); None: not graded."""
        if self.report is None or not self.report.environment.sandbox:
            return None
        env = self.report.environment
        return env.sandbox + (f" ({env.oci_runtime})" if env.oci_runtime not in (None, "runc") else "")

    @property
    def isolated(self) -> bool:
        """False for a row graded in the local sandbox: the candidate's code ran as the grader's user."""
        return self.report is None or self.report.environment.sandbox != "local"

    @property
    def scorecard(self) -> str | None:
        """Relative URL of this row's HTML scorecard in the output folder, if it has one."""
        if self.report is None:
            return None
        return f"{CANDIDATES}/{quote(self.candidate)}/{quote(self.exercise)}.html"


def flags_for(report: Report | None) -> list[str]:
    """A row's flags from its report: computed by ``grader.reports.derived.report_flags``, the one place
    flags are made (the similarity pass adds ``similar`` and ``published``, from the batch)."""
    return [] if report is None else report_flags(report)
