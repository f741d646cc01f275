"""The grading queue is the database: a grading is a row before any worker sees it, and loses nothing after.

Workers pull (as in PrairieLearn's and XQueue's external graders): a claim takes the oldest
queued row whose assessment has a free grading slot, marks it running under the worker's id
with a lease, and records the attempt, all in one transaction (SQLite: the write lock, taken at
``BEGIN IMMEDIATE``; PostgreSQL: ``FOR UPDATE SKIP LOCKED`` on the rows, then the assessment's
row locked to count its running gradings). A worker renews its leases while it grades. A row
whose worker died (its process gone, or its lease run out) is put back, and its attempt is
recorded as lost. Only the worker holding a row may finish it, so a worker presumed dead that
finishes late changes nothing: each grading ends once. Infrastructure failures are retried
with a back-off, then "not graded" (never a score); a check error is final, with its report.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from sqlalchemy import case, func, select, update

from grader.evidence.signing import Key
from grader.reports.model import Report
from grader.serve import sealed
from grader.serve.db import Database
from grader.serve.models import Assessment, AssessmentExercise, Grading, GradingAttempt, Invite, Worker, now
from grader.serve.settings import MAX_ATTEMPTS

QUEUED, RUNNING, GRADED, NOT_GRADED = "queued", "running", "graded", "not_graded"
RUN, HANDIN = "run", "handin"
#: How many queued rows one claim looks at (rows of assessments at their limit are passed over).
CLAIM_WINDOW = 20
LOST = "the worker grading it stopped before it finished (killed, or the server restarted): graded again"
#: A lost try (its worker died) does not use up one of the grading's tries, up to this many tries in all.
MAX_TRIES_WITH_LOSSES = 10


@dataclass(frozen=True)
class Claimed:
    """A grading a worker took: everything it needs to grade, as plain data."""

    id: int
    attempt: int
    kind: str
    candidate: str
    exercise: str
    fingerprint: str
    filename: str
    source: bytes
    sandbox: str
    gpus: str | None


def enqueue(s, *, invite: Invite, exercise: str, kind: str, filename: str, source: bytes) -> Grading:
    import hashlib

    g = Grading(assessment_id=invite.assessment_id, invite_id=invite.id, exercise=exercise, kind=kind,
                filename=filename, source=source, sha256=hashlib.sha256(source).hexdigest(), status=QUEUED,
                attempts=0, max_attempts=MAX_ATTEMPTS, reason="", created_at=now())
    s.add(g)
    s.flush()
    return g


def claim(db: Database, worker_id: str, *, lease_s: float) -> Claimed | None:
    """The next grading for ``worker_id`` (now running, its attempt recorded), or None when none may start."""
    with db.write() as s:
        t = now()
        running = dict(s.execute(select(Grading.assessment_id, func.count()).where(Grading.status == RUNNING)
                                 .group_by(Grading.assessment_id)).all())
        limits = dict(s.execute(select(Assessment.id, Assessment.max_concurrent)
                                .where(Assessment.id.in_(list(running)))).all()) if running else {}
        full = [a for a, n in running.items() if n >= limits.get(a, 1)]
        # Practice runs first: a candidate waits on the page for them; a hand-in is final and waited on by no one.
        rows = s.scalars(select(Grading).where(Grading.status == QUEUED, Grading.assessment_id.not_in(full),
                                               (Grading.not_before.is_(None)) | (Grading.not_before <= t))
                         .order_by(case((Grading.kind == RUN, 0), else_=1), Grading.id)
                         .limit(CLAIM_WINDOW).with_for_update(skip_locked=True)).all()
        for g in rows:
            assessment = s.get(Assessment, g.assessment_id, with_for_update=True)
            busy = s.scalar(select(func.count()).select_from(Grading).where(
                Grading.assessment_id == g.assessment_id, Grading.status == RUNNING))
            if busy >= assessment.max_concurrent:
                continue
            g.status, g.worker_id, g.attempts = RUNNING, worker_id, g.attempts + 1
            g.lease_until = t + _dt.timedelta(seconds=lease_s)
            s.add(GradingAttempt(grading_id=g.id, number=g.attempts, worker_id=worker_id, started_at=t, reason=""))
            invite = s.get(Invite, g.invite_id)
            pinned = s.scalar(select(AssessmentExercise.fingerprint).where(
                AssessmentExercise.assessment_id == g.assessment_id, AssessmentExercise.name == g.exercise))
            return Claimed(g.id, g.attempts, g.kind, invite.name, g.exercise, pinned or "", g.filename, g.source,
                           assessment.sandbox, assessment.gpus)
    return None


def heartbeat(db: Database, worker_id: str, grading_ids: list[int], *, lease_s: float) -> None:
    """The worker is alive: its row's heartbeat and the leases of the gradings it holds move forward."""
    with db.write() as s:
        t = now()
        s.execute(update(Worker).where(Worker.id == worker_id).values(heartbeat_at=t))
        if grading_ids:
            s.execute(update(Grading).where(Grading.id.in_(grading_ids), Grading.worker_id == worker_id,
                                            Grading.status == RUNNING)
                      .values(lease_until=t + _dt.timedelta(seconds=lease_s)))


def infrastructure(report: Report, claimed: Claimed) -> str | None:
    """Why ``report`` is not this grading's result, as the infrastructure's failure (retried); None when it is."""
    if not report.graded and not report.check_errors:
        return report.not_graded_reason or "not graded"
    env = report.environment
    if claimed.fingerprint and env.exercise_fingerprint != claimed.fingerprint:
        return (f"the worker graded exercise {claimed.exercise} at fingerprint {env.exercise_fingerprint[:12]}, "
                f"the assessment pinned {claimed.fingerprint[:12]}")
    if env.sandbox not in (claimed.sandbox, "none"):
        return f"the worker graded in the {env.sandbox or '(unknown)'} sandbox, the assessment asks for {claimed.sandbox}"
    return None


def finish(db: Database, worker_id: str, claimed: Claimed, report: Report, key: Key) -> str | None:
    """Record how ``claimed`` went: its row's new status, or None when the row is no longer this worker's
    (put back meanwhile: another attempt owns it, and this late answer changes nothing)."""
    with db.write() as s:
        g = s.get(Grading, claimed.id, with_for_update=True)
        if g is None or g.status != RUNNING or g.worker_id != worker_id or g.attempts != claimed.attempt:
            return None
        attempt = s.scalar(select(GradingAttempt).where(GradingAttempt.grading_id == g.id,
                                                        GradingAttempt.number == g.attempts))
        t = now()
        why = infrastructure(report, claimed)
        if why is None:
            g.status = GRADED if report.graded else NOT_GRADED  # not graded here: a check error, final, with its report
            g.report, g.reason = report.to_json(), report.not_graded_reason or ""
            attempt.outcome = "graded" if report.graded else "check_error"
        else:
            attempt.outcome, attempt.reason = "infra", why[:4000]
            _again_or_final(g, why, t)
        attempt.ended_at = t
        g.worker_id = g.lease_until = None
        g.finished_at = t if g.status != QUEUED else None
        sealed.sign(g, key)
        return g.status


def _again_or_final(g: Grading, why: str, t: _dt.datetime, *, pause: bool = True) -> None:
    """Back in the queue (after a pause that grows with each try: a failing engine is not hammered), or, with its
    tries spent, not graded (never a score) and why. A lost worker's row needs no pause: it is not the grading's fault."""
    if g.attempts < g.max_attempts:
        g.status, g.not_before = QUEUED, t + _dt.timedelta(seconds=2 * g.attempts) if pause else None
    else:
        g.status = NOT_GRADED
        g.reason = f"not graded after {g.attempts} attempts: {why}"[:4000]


def put_back(db: Database, key: Key, *, dead: list[str] = (), stale: bool = True) -> int:
    """Put back the gradings of workers known dead (``dead``) and, with ``stale``, those whose lease ran out:
    each lost attempt is recorded; the row is queued again, or not graded once its tries are spent."""
    with db.write() as s:
        t = now()
        lost = (Grading.worker_id.in_(list(dead)) if dead else None)
        late = (Grading.lease_until < t) if stale else None
        which = [c for c in (lost, late) if c is not None]
        if not which:
            return 0
        rows = s.scalars(select(Grading).where(Grading.status == RUNNING, which[0] if len(which) == 1
                                               else which[0] | which[1]).with_for_update(skip_locked=True)).all()
        for g in rows:
            attempt = s.scalar(select(GradingAttempt).where(GradingAttempt.grading_id == g.id,
                                                            GradingAttempt.number == g.attempts))
            if attempt is not None:
                attempt.outcome, attempt.reason, attempt.ended_at = "lost", LOST, t
            if g.max_attempts < MAX_TRIES_WITH_LOSSES:
                g.max_attempts += 1  # the worker's death is not the grading's failure
            _again_or_final(g, LOST, t, pause=False)
            g.worker_id = g.lease_until = None
            g.finished_at = t if g.status != QUEUED else None
            sealed.sign(g, key)
        if dead:
            s.execute(update(Worker).where(Worker.id.in_(list(dead)), Worker.stopped_at.is_(None)).values(stopped_at=t))
        return len(rows)


def grade_again(s, g: Grading, key: Key) -> None:
    """The panel queues a grading the infrastructure failed once more (``MAX_ATTEMPTS`` more tries)."""
    if g.status != NOT_GRADED or g.report is not None:
        from grader.serve.errors import Refusal

        raise Refusal(409, "Only a grading the infrastructure failed (not graded, with no report) is graded again.")
    g.status, g.not_before, g.finished_at, g.reason = QUEUED, None, None, ""
    g.max_attempts = g.attempts + MAX_ATTEMPTS
    sealed.sign(g, key)
