"""Do two reports of one submission make the same decision?

Used by ``grader regrade`` (a stored report against a fresh grading), by the check
that a batch's exported JSON says what its store says, and to show the local
sandbox scores honest submissions as Docker does. The whole decision is compared:
graded or not, score and max score, flags, every check's status and points, and
the findings behind the flags (forbidden hits, source-audit findings). Messages
are not: a message may carry a timing or an address that honestly differs
between runs.
"""

from __future__ import annotations

from collections import Counter

from grader.reports.derived import report_flags
from grader.reports.model import Report

#: Lists of a report that carry the decision (what costs credit or raises a flag), compared as multisets.
#: A list another part of the grader adds to the report (a subset's violations) belongs here too;
#: a name the report does not have is skipped.
DECISION_LISTS = ("forbidden", "findings", "violations")


#: Flags that say where a report was graded, not what was decided: a regrade in another sandbox says so in a
#: note of its own, and the decision it reaches is compared without them.
ENVIRONMENT_FLAGS = frozenset({"not_isolated"})


def decision_flags(report: Report) -> list[str]:
    """The report's flags that are part of its decision (``report_flags`` less :data:`ENVIRONMENT_FLAGS`)."""
    return [f for f in report_flags(report) if f not in ENVIRONMENT_FLAGS]


def decision_differences(expected: Report, actual: Report, *, sides: tuple[str, str] = ("first", "second")
                         ) -> list[str]:
    """One line per disagreement, each naming what differs and both values (``sides`` names the two reports:
    "recorded" and "regraded", say)."""
    first, second = sides
    if expected.graded != actual.graded:
        return [f"graded: {expected.graded} vs {actual.graded} ({expected.not_graded_reason or actual.not_graded_reason})"]
    out = []
    for name in ("score", "max_score"):
        a, b = getattr(expected, name), getattr(actual, name)
        if a != b:
            out.append(f"{name}: {a:g} vs {b:g}")
    flags_a, flags_b = decision_flags(expected), decision_flags(actual)
    if flags_a != flags_b:
        out.append(f"flags: {' '.join(flags_a) or '(none)'} vs {' '.join(flags_b) or '(none)'}")
    out += check_differences(expected, actual, sides=sides)
    for name in DECISION_LISTS:
        if name not in type(expected).model_fields:
            continue
        a = Counter(_entry(x) for x in getattr(expected, name))
        b = Counter(_entry(x) for x in getattr(actual, name))
        out += [f"{name}: {entry} only in the {first} report" for entry in sorted((a - b).elements())]
        out += [f"{name}: {entry} only in the {second} report" for entry in sorted((b - a).elements())]
    if (expected.load_error is None) != (actual.load_error is None):
        out.append(f"load error: {_load_error(expected)} vs {_load_error(actual)}")
    return out


def check_differences(expected: Report, actual: Report, *, sides: tuple[str, str] = ("first", "second")
                      ) -> list[str]:
    """One line per check whose status or points differ, or that only one report has."""
    ours = {c.id: c for c in expected.checks}
    theirs = {c.id: c for c in actual.checks}
    out = []
    for check_id in sorted(ours.keys() | theirs.keys()):
        a, b = ours.get(check_id), theirs.get(check_id)
        if a is None or b is None:
            out.append(f"{check_id}: only in the {sides[1] if a is None else sides[0]} report")
        elif (a.status, a.score, a.max_score) != (b.status, b.score, b.max_score):
            out.append(f"{a.name} [{check_id}]: {a.status.value} {a.score:g}/{a.max_score:g} vs "
                       f"{b.status.value} {b.score:g}/{b.max_score:g} ({b.message[:160] or a.message[:160]})")
    return out


#: The old name: every caller now compares the whole decision.
outcome_differences = decision_differences


def _entry(item) -> str:
    """A forbidden hit or a finding as one line: its fields, in their order (``api=... how=... where=...``)."""
    fields = item.model_dump(mode="json") if hasattr(item, "model_dump") else {"value": item}
    return " ".join(f"{k}={v}" for k, v in fields.items() if v not in (None, ""))


def _load_error(report: Report) -> str:
    return "none" if report.load_error is None else f"{report.load_error.found}: {report.load_error.summary[:120]}"
