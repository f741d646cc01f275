"""Where every candidate of an assessment stands: what the panel's live table shows (page, stream and JSON).

A candidate is invited, started, handed in, grading, graded, not graded (the infrastructure
failed: it is graded again on request, never a 0) or revoked. A hand-in's score is shown
only from a stored result that verifies under the panel's key (``grader.serve.sealed``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass

from sqlalchemy import select

from grader.evidence.signing import Key
from grader.reports.headline import fmt_points
from grader.serve import queue
from grader.serve.models import Assessment, Grading, Invite, now
from grader.serve.sealed import stored_report
from grader.serve.takehome import exercises_of, seconds_left


@dataclass(frozen=True)
class Cell:
    """One hand-in of one exercise, as the table shows it."""

    exercise: str
    status: str  # "", queued, running, graded, not_graded, check_error, unverified
    score: str | None = None
    grading_id: int | None = None
    reason: str = ""


@dataclass(frozen=True)
class CandidateState:
    invite_id: int
    name: str
    state: str
    started_at: str | None
    seconds_left: float | None
    handed_in_at: str | None
    handed_in_by: str | None
    runs: int
    cells: list[Cell]


def _when(t) -> str | None:
    return None if t is None else t.strftime("%Y-%m-%d %H:%M:%S UTC")


def cell_of(g: Grading | None, exercise: str, key: Key | None) -> Cell:
    if g is None:
        return Cell(exercise, "")
    if g.status in (queue.QUEUED, queue.RUNNING):
        return Cell(exercise, g.status, grading_id=g.id)
    report, problem = stored_report(g, key)
    if problem:
        return Cell(exercise, "unverified", grading_id=g.id, reason=problem)
    if report is None:  # the infrastructure's failure, its tries spent
        return Cell(exercise, queue.NOT_GRADED, grading_id=g.id, reason=g.reason)
    if report.check_errors:
        return Cell(exercise, "check_error", grading_id=g.id, reason=report.not_graded_reason or "")
    return Cell(exercise, queue.GRADED, f"{fmt_points(report.score)}/{fmt_points(report.max_score)}", g.id)


def candidate_state(invite: Invite, cells: list[Cell]) -> str:
    if invite.handed_in_at is not None:
        statuses = {c.status for c in cells}
        if statuses & {queue.QUEUED, queue.RUNNING}:
            return "grading"
        return "not graded" if statuses & {queue.NOT_GRADED, "unverified"} else "graded"
    if invite.revoked_at is not None:
        return "revoked"
    return "invited" if invite.started_at is None else "started"


def states(s, a: Assessment, key: Key | None) -> list[CandidateState]:
    invites = s.scalars(select(Invite).where(Invite.assessment_id == a.id).order_by(Invite.name)).all()
    names = [e.name for e in exercises_of(s, a.id)]
    handins: dict[tuple[int, str], Grading] = {}
    runs: dict[int, int] = defaultdict(int)
    for g in s.scalars(select(Grading).where(Grading.assessment_id == a.id).order_by(Grading.id)):
        if g.kind == queue.HANDIN:
            handins[(g.invite_id, g.exercise)] = g  # the latest hand-in grading of each exercise
        else:
            runs[g.invite_id] += 1
    t = now()
    out = []
    for i in invites:
        cells = [cell_of(handins.get((i.id, name)), name, key) for name in names]
        out.append(CandidateState(i.id, i.name, candidate_state(i, cells), _when(i.started_at),
                                  seconds_left(i, a, t) if i.handed_in_at is None else None, _when(i.handed_in_at),
                                  i.handed_in_by, runs[i.id], cells))
    return out


def as_json(found: list[CandidateState]) -> list[dict]:
    return [asdict(c) for c in found]
