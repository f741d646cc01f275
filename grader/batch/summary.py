"""The panel page's header counts, and the problems listed under them: one partition of the rows.

Every row is counted exactly once. A *submission* is any row but ``missing``, and is exactly one of:
graded, scored 0 without an attempt (stub, empty, not Python), not graded (rerun, or a check error),
or a problem row; so ``Summary.parts`` add up to ``submissions``, and ``missing`` is counted beside.
"Problems" counts exactly what the page lists under that heading (problem rows and layout problems
tied to no row); files the batch ignores are listed apart and counted nowhere.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from grader.batch.model import Row, RowStatus

#: Rows that are problems in the submissions folder: listed, with their reason, in the problems box.
PROBLEM_ROWS = (RowStatus.UNREADABLE, RowStatus.AMBIGUOUS, RowStatus.UNKNOWN_EXERCISE)


@dataclass(frozen=True)
class Summary:
    candidates: int
    submissions: int  # every row but missing: the sum of ``parts``
    graded: int  # graded by the checks
    untouched_stub: int  # scored 0 without an attempt: the exercise's stub, unchanged
    empty: int  # scored 0 without grading: the file is empty
    invalid: int  # scored 0 without grading: the file is not Python
    not_graded: int  # the infrastructure failed: rerun
    check_error: int  # a check's own code raised: no score until it is fixed
    problem_rows: int  # unreadable, ambiguous, unknown exercise: in the problems box
    missing: int
    problems: list[str]  # what the problems box lists, one line each: problem rows and layout problems
    ignored: list[str] = ()  # files the batch does not read (notes beside exercise folders), one line each

    @property
    def problem_count(self) -> int:
        return len(self.problems)

    @property
    def layout_problems(self) -> int:
        return len(self.problems) - self.problem_rows

    @property
    def parts(self) -> list[tuple[int, str, str]]:
        """``(n, words, css class)`` for each kind of submission, in the order the header lists them; their
        ``n`` add up to ``submissions`` (a zero part is listed when it is one a panel looks for)."""
        parts = [(self.graded, "graded", ""),
                 (self.untouched_stub, "untouched stub (scored 0)", ""),
                 (self.empty, "empty (scored 0)", ""),
                 (self.invalid, "invalid (scored 0)", ""),
                 (self.not_graded, "not graded (rerun)", "bad" if self.not_graded else ""),
                 (self.check_error, "check error (not graded)", "bad" if self.check_error else ""),
                 (self.problem_rows, "could not be read (see problems)", "")]
        return [p for p in parts if p[0] or p[1] in ("graded", "not graded (rerun)")]


def summarize(rows: list[Row], candidates: int, layout_problems: list[str], ignored: list[str] = ()) -> Summary:
    statuses = Counter(r.status for r in rows)
    listed = [f"{r.candidate}/{r.exercise}: {r.reason or r.status.value}" for r in rows if r.status in PROBLEM_ROWS]
    return Summary(
        candidates=candidates,
        submissions=len(rows) - statuses[RowStatus.MISSING],
        graded=statuses[RowStatus.GRADED],
        untouched_stub=statuses[RowStatus.UNTOUCHED_STUB],
        empty=statuses[RowStatus.EMPTY],
        invalid=statuses[RowStatus.INVALID],
        not_graded=statuses[RowStatus.NOT_GRADED],
        check_error=statuses[RowStatus.CHECK_ERROR],
        problem_rows=len(listed),
        missing=statuses[RowStatus.MISSING],
        problems=list(layout_problems) + listed,
        ignored=list(ignored),
    )
