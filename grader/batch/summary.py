"""The panel page's header counts, and the problems listed under them: one partition of the rows.

Every row of a batch is counted exactly once: a submission (any row but
``missing``) is graded, scored 0 as empty or invalid, not graded, or a problem,
so the header's numbers add up to its number of submissions and nothing is left
out silently. "Problems" counts exactly what the page lists under that heading:
the rows no file could be graded for (unreadable, ambiguous, an unknown
exercise folder) and the layout problems tied to no row.
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
    submissions: int  # every row but missing: graded + empty + invalid + not_graded + problem rows
    graded: int  # graded by the checks
    empty: int  # scored 0 without grading: the file is empty
    invalid: int  # scored 0 without grading: the file is not Python
    not_graded: int
    missing: int
    problems: list[str]  # what the problems box lists, one line each

    @property
    def problem_count(self) -> int:
        return len(self.problems)


def summarize(rows: list[Row], candidates: int, layout_problems: list[str]) -> Summary:
    statuses = Counter(r.status for r in rows)
    listed = [f"{r.candidate}/{r.exercise}: {r.reason or r.status.value}" for r in rows if r.status in PROBLEM_ROWS]
    return Summary(
        candidates=candidates,
        submissions=len(rows) - statuses[RowStatus.MISSING],
        graded=statuses[RowStatus.GRADED],
        empty=statuses[RowStatus.EMPTY],
        invalid=statuses[RowStatus.INVALID],
        not_graded=statuses[RowStatus.NOT_GRADED],
        missing=statuses[RowStatus.MISSING],
        problems=list(layout_problems) + listed,
    )
