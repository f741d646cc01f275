"""Do two reports of one submission agree, check by check?

Used to show the local sandbox scores honest submissions as Docker does, and
(later) to regrade a stored report. Outcomes are compared, not messages: a
message may carry a timing or an address that honestly differs between runs.
"""

from __future__ import annotations

from grader.reports.model import Report


def outcome_differences(expected: Report, actual: Report) -> list[str]:
    """One line per disagreement (graded or not, a check's status or points, a check only one side has)."""
    if expected.graded != actual.graded:
        return [f"graded: {expected.graded} vs {actual.graded} ({expected.not_graded_reason or actual.not_graded_reason})"]
    ours = {c.id: c for c in expected.checks}
    theirs = {c.id: c for c in actual.checks}
    out = []
    for check_id in sorted(ours.keys() | theirs.keys()):
        a, b = ours.get(check_id), theirs.get(check_id)
        if a is None or b is None:
            out.append(f"{check_id}: only in the {'second' if a is None else 'first'} report")
        elif (a.status, a.score, a.max_score) != (b.status, b.score, b.max_score):
            out.append(f"{a.name} [{check_id}]: {a.status.value} {a.score:g}/{a.max_score:g} vs "
                       f"{b.status.value} {b.score:g}/{b.max_score:g} ({b.message[:160] or a.message[:160]})")
    return out
