"""What went wrong, told once: checks that failed the same way are one entry, not a wall.

The stub raises ``NotImplementedError`` in ``MultiHeadAttention.__init__`` for
every MHA check; a scorecard says so once ("4 checks: your code raised ...") with
the traceback once, and lists the checks under it. Grouping reads only the view a
renderer gets, which is already redacted for its audience (``redact.for_audience``):
a hidden check whose details a candidate may not see is never in a candidate's
groups, so a group's size tells them nothing they could not count in the table.
The JSON report stays per check.
"""

from __future__ import annotations

from dataclasses import dataclass
from grader.reports.views import CheckView


@dataclass(frozen=True)
class ProblemGroup:
    """Checks that ended the same way: same status, message, traceback (the candidate's frames) and output."""

    checks: list[CheckView]

    @property
    def first(self) -> CheckView:
        """The one whose message, details and output are shown for all."""
        return self.checks[0]

    @property
    def grouped(self) -> bool:
        return len(self.checks) > 1

    @property
    def heading(self) -> str:
        """``"4 checks: your code raised NotImplementedError: ..."`` (the message's first line)."""
        return f"{len(self.checks)} checks: {self.first.summary}"


def _key(c: CheckView) -> tuple:
    return c.status, c.message.strip(), c.own_details.strip(), c.output, c.output_truncated


def group_problems(problems: list[CheckView]) -> list[ProblemGroup]:
    """``problems`` in groups of identical outcomes, each group where its first check stood.

    A failed check (a wrong answer) groups only when its whole message is the same: two
    different wrong values are two problems. Its counterexample and hint differ per check,
    so a group shows neither: the error does not depend on the input, and the next grading
    shows them once the error is fixed.
    """
    groups: dict[tuple, list[CheckView]] = {}
    for c in problems:
        groups.setdefault(_key(c), []).append(c)
    return [ProblemGroup(checks) for checks in groups.values()]
