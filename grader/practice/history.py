"""A candidate's past attempts: what they scored, when, and which checks flipped since last time.

Only graded attempts are kept: a "not graded" run scored nothing, so it is no
attempt. Checks are remembered as the candidate's copy of the report shows them
(``redact.for_audience``): by id with their scorecard name, status and points,
a hidden check by its hashed id and its name without parameters. So neither the
store nor "what flipped since last time" holds a hidden check's inputs.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from pathlib import Path

from grader.practice.store import connect
from grader.reports.model import Report
from grader.reports.redact import for_audience
from grader.untrusted import shown


@dataclass(frozen=True)
class CheckOutcome:
    name: str
    status: str
    score: float
    max_score: float

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def ran(self) -> bool:
        """A skipped check (say, a GPU check on a laptop) neither passed nor failed, and one that did not run
        (the file did not import) says nothing about the check: neither can flip."""
        return self.status not in ("skipped", NOT_RUN)


#: How the history stores a check that did not run because the file did not import.
NOT_RUN = "not run"


@dataclass(frozen=True)
class Attempt:
    id: int
    exercise: str
    at: str  # ISO 8601, UTC
    score: float
    max_score: float
    sandbox: str
    sha256: str
    fingerprint: str
    elapsed_s: float | None = None
    over_limit: bool | None = None
    checks: dict[str, CheckOutcome] = field(default_factory=dict)

    @property
    def fraction(self) -> float:
        return self.score / self.max_score if self.max_score else 0.0


@dataclass(frozen=True)
class Flips:
    """Checks whose pass/fail changed between two attempts at one exercise."""

    fixed: list[str]  # failed before, pass now (names)
    broke: list[str]  # passed before, fail now
    exercise_changed: bool  # the exercise's checks changed in between: compare with care
    #: The file does not import now (no check ran): how many passed before. Said in one line, not per check.
    stopped: int | None = None
    #: The file did not import before and does now: (checks passing now, checks that ran).
    resumed: tuple[int, int] | None = None

    def __bool__(self) -> bool:
        return bool(self.fixed or self.broke or self.stopped or self.resumed)

    def counts(self) -> str:
        """``fixed 2, broke 1`` (``no check flipped`` when none did), with a note when the exercise changed;
        a file that stopped (or started again) importing is one sentence, not a line per check."""
        if self.stopped is not None:
            text = (f"the file does not import now: {self.stopped} check{'s' if self.stopped != 1 else ''} that "
                    "passed last time did not run") if self.stopped else "the file does not import now: no check ran"
        elif self.resumed is not None:
            text = f"the file imports again: {self.resumed[0]} of {self.resumed[1]} checks pass"
        else:
            parts = [f"{label} {len(names)}" for label, names in (("fixed", self.fixed), ("broke", self.broke))
                     if names]
            text = ", ".join(parts) or "no check flipped"
        return f"{text} (the exercise changed in between)" if self.exercise_changed else text

    def lines(self) -> list[str]:
        """One line per flipped check, ``fixed: NAME`` or ``broke: NAME``: a list that reads down and greps,
        where a comma-joined one wrapped mid-name. Names come from stored reports: shown on one line each."""
        return [f"{label}: {shown(name, newlines=False)}"
                for label, names in (("fixed", self.fixed), ("broke", self.broke)) for name in names]


def record(report: Report, *, db: Path | None = None) -> Attempt | None:
    """Store ``report`` as an attempt; ``None`` (nothing stored) when it was not graded."""
    if not report.graded:
        return None
    report = for_audience(report, "candidate")
    checks = {c.id: [c.name, NOT_RUN if c.not_run else c.status.value, c.score, c.max_score] for c in report.checks}
    timing = report.timing
    env = report.environment
    at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    with connect(db) as conn:
        cur = conn.execute(
            "INSERT INTO attempts (exercise, exercise_version, fingerprint, at, score, max_score, sandbox, sha256,"
            " elapsed_s, over_limit, checks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (report.exercise, env.exercise_version, env.exercise_fingerprint, at, report.score, report.max_score,
             env.sandbox, env.submission_sha256, timing.elapsed_s if timing else None,
             int(timing.over_limit) if timing else None, json.dumps(checks)),
        )
        row = conn.execute("SELECT * FROM attempts WHERE id = ?", (cur.lastrowid,)).fetchone()
    return _attempt(row)


def attempts(exercise: str | None = None, *, db: Path | None = None) -> list[Attempt]:
    """Attempts oldest first, for one exercise or all."""
    with connect(db) as conn:
        if exercise is None:
            rows = conn.execute("SELECT * FROM attempts ORDER BY id").fetchall()
        else:
            rows = conn.execute("SELECT * FROM attempts WHERE exercise = ? ORDER BY id", (exercise,)).fetchall()
    return [_attempt(r) for r in rows]


def best_scores(*, db: Path | None = None) -> dict[str, Attempt]:
    """Each exercise's best attempt (highest fraction of the points; the earliest on a tie)."""
    best: dict[str, Attempt] = {}
    for a in attempts(db=db):
        if a.exercise not in best or a.fraction > best[a.exercise].fraction:
            best[a.exercise] = a
    return best


def flips(before: Attempt, after: Attempt) -> Flips:
    """Which checks flipped from ``before`` to ``after`` (checks present in both and run both times only)."""
    changed = before.fingerprint != after.fingerprint
    if _none_ran(after):
        return Flips([], [], changed, stopped=sum(c.passed for c in before.checks.values()))
    if _none_ran(before):
        ran = [c for c in after.checks.values() if c.ran]
        return Flips([], [], changed, resumed=(sum(c.passed for c in ran), len(ran)))
    fixed, broke = [], []
    for check_id, now in after.checks.items():
        then = before.checks.get(check_id)
        if then is None or not (then.ran and now.ran) or then.passed == now.passed:
            continue
        (fixed if now.passed else broke).append(now.name)
    return Flips(fixed=fixed, broke=broke, exercise_changed=changed)


def _none_ran(a: Attempt) -> bool:
    """No check ran the candidate's logic: the file did not import (every check not run, or skipped)."""
    return any(c.status == NOT_RUN for c in a.checks.values()) and not any(c.ran for c in a.checks.values())


def _attempt(row) -> Attempt:
    checks = {k: CheckOutcome(*v) for k, v in json.loads(row["checks"]).items()}
    return Attempt(
        id=row["id"], exercise=row["exercise"], at=row["at"], score=row["score"], max_score=row["max_score"],
        sandbox=row["sandbox"], sha256=row["sha256"], fingerprint=row["fingerprint"], elapsed_s=row["elapsed_s"],
        over_limit=None if row["over_limit"] is None else bool(row["over_limit"]), checks=checks,
    )
