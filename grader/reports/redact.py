"""A report as a candidate may keep it: hidden checks reduced to name, points and status.

The scorecards redact through ``render.scorecard_view``; this does the same to
the JSON data itself, so ``grader submit --json`` in the candidate audience never
writes a hidden check's message, inputs, expected values or output to disk.
The copy says so (``audience: candidate``) and is never fed back into a batch.
"""

from __future__ import annotations

import hashlib

from grader.reports.model import CheckResult, Report, Status, Visibility

#: Fields of a hidden check that may carry its inputs, expected values or the candidate's output on them.
WITHHELD = {"message": "", "details": "", "counterexample": None, "hint": None, "forbidden": [], "output": "",
            "output_truncated": False}


def for_audience(report: Report, audience: str) -> Report:
    """``report`` itself for the panel; for a candidate, a copy with hidden checks' details withheld."""
    if audience == "panel":
        return report
    hidden = {c.id: c.name for c in report.checks if c.visibility is Visibility.HIDDEN}
    checks = [c.model_copy(update={**WITHHELD, "id": opaque_id(c.id)}) if c.id in hidden
              else c.model_copy(update={"details": candidate_details(c)}) for c in report.checks]
    # A runtime hit names the check it happened in by id; a hidden check's id can hold its inputs.
    forbidden = [h.model_copy(update={"where": hidden[h.where], "check": hidden[h.where]}) if h.where in hidden else h
                 for h in report.forbidden]
    findings = [f.model_copy(update={"where": hidden[f.where]}) if f.where in hidden else f for f in report.findings]
    return report.model_copy(update={"checks": checks, "forbidden": forbidden, "findings": findings,
                                     "audience": "candidate"})


def opaque_id(check_id: str) -> str:
    """A hidden check's id as a candidate sees it: stable across attempts, but a parametrized
    id such as ``test_mask.py::test_rows[3-True]`` would show the inputs, so it is hashed."""
    return "hidden-" + hashlib.sha256(check_id.encode()).hexdigest()[:12]


#: Where hypothesis starts restating the example; the scorecard shows the shrunk counterexample apart.
_EXAMPLE_STARTS = ("Failing test case", "Falsifying example", "Falsifying explicit example", "Failing explicit example")


def candidate_details(check: CheckResult) -> str:
    """A visible check's details as a candidate sees them: what was wrong, not where in our code.

    A failed check's details are pytest's traceback through the judge (the check,
    ``grader.judge.expect``, hypothesis). The candidate needs its ``E`` lines, the
    explanation, and not our frames. An error's details are already the candidate's
    own traceback, filtered in the sandbox, and stay as they are.
    """
    if check.status is not Status.FAILED:
        return check.details
    kept = []
    for line in check.details.splitlines():
        if not line.startswith("E"):
            continue  # a frame: a path, a line of judge code
        text = line[1:].strip()
        if text.startswith(_EXAMPLE_STARTS):
            break
        if not text.startswith("(note:"):
            kept.append(text)
    return "\n".join(kept).strip()
