"""The service's tables (SQLAlchemy 2): panel accounts, assessments, candidates' attempts, drafts and the grading queue.

One schema for SQLite and PostgreSQL; ``grader.serve.migrations`` creates and changes it (a
test holds the two in step). Times are UTC, stored without a zone and read back with one. A
grading is a row before it runs (``status`` queued, running, graded, not_graded); each try of
it is a ``GradingAttempt``, so a worker that died leaves a visible attempt, not a lost request.
"""

from __future__ import annotations

import datetime as _dt

from sqlalchemy import (DateTime, ForeignKey, Index, Integer, LargeBinary, String, Text, TypeDecorator,
                        UniqueConstraint)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


class UTC(TypeDecorator):
    """A UTC instant: stored naive (both databases alike), read back aware."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("a naive datetime reached the database: times are UTC and aware")
        return value.astimezone(_dt.timezone.utc).replace(tzinfo=None)

    def process_result_value(self, value, dialect):
        return None if value is None else value.replace(tzinfo=_dt.timezone.utc)


class Base(DeclarativeBase):
    pass


#: The longest name, title or exercise name a form may give (names are NFC-normalised first).
NAME_MAX = 100
TITLE_MAX = 200


class User(Base):
    """A panel member: signs in with a name and a password (argon2 hash)."""

    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[_dt.datetime] = mapped_column(UTC, default=now)


class PanelSession(Base):
    """A signed-in browser: the cookie holds a random token, the table its sha256 (a stolen table opens nothing)."""

    __tablename__ = "panel_sessions"
    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    csrf: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[_dt.datetime] = mapped_column(UTC, default=now)
    expires_at: Mapped[_dt.datetime] = mapped_column(UTC)


class Assessment(Base):
    """A take-home: exercises from the catalog, a time limit, when it opens and closes, where it grades."""

    __tablename__ = "assessments"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    title: Mapped[str] = mapped_column(String(TITLE_MAX))
    time_limit_s: Mapped[int] = mapped_column(Integer)
    opens_at: Mapped[_dt.datetime] = mapped_column(UTC)
    closes_at: Mapped[_dt.datetime] = mapped_column(UTC)
    sandbox: Mapped[str] = mapped_column(String(16))
    gpus: Mapped[str | None] = mapped_column(String(64), nullable=True)
    runs_per_minute: Mapped[int] = mapped_column(Integer)
    max_concurrent: Mapped[int] = mapped_column(Integer)
    created_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[_dt.datetime] = mapped_column(UTC, default=now)


class AssessmentExercise(Base):
    """One exercise of an assessment, pinned by fingerprint: a catalog that changes afterwards is refused, not used."""

    __tablename__ = "assessment_exercises"
    assessment_id: Mapped[int] = mapped_column(ForeignKey("assessments.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_MAX))
    title: Mapped[str] = mapped_column(String(TITLE_MAX))
    submission: Mapped[str] = mapped_column(String(NAME_MAX))
    fingerprint: Mapped[str] = mapped_column(String(64))


class Invite(Base):
    """A candidate's attempt at an assessment, reached by one unguessable link (its token, stored hashed)."""

    __tablename__ = "invites"
    __table_args__ = (UniqueConstraint("assessment_id", "name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    assessment_id: Mapped[int] = mapped_column(ForeignKey("assessments.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(NAME_MAX))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    csrf: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[_dt.datetime] = mapped_column(UTC, default=now)
    revoked_at: Mapped[_dt.datetime | None] = mapped_column(UTC, nullable=True)
    started_at: Mapped[_dt.datetime | None] = mapped_column(UTC, nullable=True)
    deadline_at: Mapped[_dt.datetime | None] = mapped_column(UTC, nullable=True)
    handed_in_at: Mapped[_dt.datetime | None] = mapped_column(UTC, nullable=True)
    handed_in_by: Mapped[str | None] = mapped_column(String(16), nullable=True)  # 'candidate' or 'clock'


class Draft(Base):
    """The editor's text for one exercise, saved as the candidate types; ``seq`` orders saves from one page."""

    __tablename__ = "drafts"
    invite_id: Mapped[int] = mapped_column(ForeignKey("invites.id", ondelete="CASCADE"), primary_key=True)
    exercise: Mapped[str] = mapped_column(String(NAME_MAX), primary_key=True)
    text: Mapped[str] = mapped_column(Text)
    seq: Mapped[int] = mapped_column(Integer, default=0)
    saved_at: Mapped[_dt.datetime] = mapped_column(UTC, default=now)


class Grading(Base):
    """One grading, queued before it runs: a practice run (visible checks) or a hand-in (every check, final)."""

    __tablename__ = "gradings"
    __table_args__ = (Index("ix_gradings_status_id", "status", "id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    assessment_id: Mapped[int] = mapped_column(ForeignKey("assessments.id", ondelete="CASCADE"), index=True)
    invite_id: Mapped[int] = mapped_column(ForeignKey("invites.id", ondelete="CASCADE"), index=True)
    exercise: Mapped[str] = mapped_column(String(NAME_MAX))
    kind: Mapped[str] = mapped_column(String(16))  # 'run' or 'handin'
    filename: Mapped[str] = mapped_column(String(NAME_MAX))
    source: Mapped[bytes] = mapped_column(LargeBinary)
    sha256: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[_dt.datetime] = mapped_column(UTC, default=now)
    worker_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    lease_until: Mapped[_dt.datetime | None] = mapped_column(UTC, nullable=True)
    not_before: Mapped[_dt.datetime | None] = mapped_column(UTC, nullable=True)  # a retry's back-off
    attempts: Mapped[int] = mapped_column(Integer, default=0)  # tries so far (each a GradingAttempt, numbered)
    max_attempts: Mapped[int] = mapped_column(Integer)  # tries allowed before "not graded" (raised by "grade again")
    report: Mapped[str | None] = mapped_column(Text, nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    finished_at: Mapped[_dt.datetime | None] = mapped_column(UTC, nullable=True)
    signature: Mapped[str | None] = mapped_column(String(120), nullable=True)


class GradingAttempt(Base):
    """One try of a grading by one worker, and how it ended (graded, not_graded, infra, lost)."""

    __tablename__ = "grading_attempts"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    grading_id: Mapped[int] = mapped_column(ForeignKey("gradings.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    worker_id: Mapped[str] = mapped_column(String(32))
    started_at: Mapped[_dt.datetime] = mapped_column(UTC, default=now)
    ended_at: Mapped[_dt.datetime | None] = mapped_column(UTC, nullable=True)
    outcome: Mapped[str | None] = mapped_column(String(16), nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")


class Worker(Base):
    """A grading worker process: where it runs and when it was last seen alive (its heartbeat)."""

    __tablename__ = "workers"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    engine: Mapped[str] = mapped_column(String(16))
    started_at: Mapped[_dt.datetime] = mapped_column(UTC, default=now)
    heartbeat_at: Mapped[_dt.datetime] = mapped_column(UTC, default=now)
    stopped_at: Mapped[_dt.datetime | None] = mapped_column(UTC, nullable=True)
