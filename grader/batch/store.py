"""The batch's results, in SQLite inside the output folder: what makes a batch resumable.

A row is keyed by (candidate, exercise, submission sha256, exercise version), so a
rerun grades only what is new or changed, and a file edited after grading is
graded again under its new hash. The version key also names the sandbox and OCI
runtime when they are not Docker under runc (``runner.version_key``), so results
graded in the local sandbox are never republished by a Docker run. A report is written in one transaction when its
grading ends, so a batch killed at any moment (Ctrl-C, kill -9) loses at most the
gradings in flight, which the rerun picks up. A grading the infrastructure failed
is stored as ``not_graded`` with its attempt count and reason, never as a score.
The store belongs to the driver process alone: workers (threads, Ray tasks) hand
reports back and never write here.
"""

from __future__ import annotations

import datetime as _dt
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from grader.reports.model import Report

FILENAME = "grader.sqlite"
SCHEMA = """
CREATE TABLE IF NOT EXISTS gradings (
    candidate TEXT NOT NULL,
    exercise TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    exercise_version TEXT NOT NULL,
    source TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('graded', 'not_graded')),
    attempts INTEGER NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    report TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (candidate, exercise, sha256, exercise_version)
);
"""


@dataclass(frozen=True)
class Key:
    candidate: str
    exercise: str
    sha256: str
    exercise_version: str


@dataclass(frozen=True)
class Stored:
    key: Key
    status: str  # 'graded' or 'not_graded'
    attempts: int
    reason: str
    report: Report | None


class Store:
    def __init__(self, folder: Path):
        self.path = folder / FILENAME
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")  # readers (a panel's script) never block the writer
        self.db.execute("PRAGMA synchronous=FULL")  # a stored report survives a power cut
        self.db.executescript(SCHEMA)

    def get(self, key: Key) -> Stored | None:
        row = self.db.execute(
            "SELECT status, attempts, reason, report FROM gradings WHERE candidate=? AND exercise=? "
            "AND sha256=? AND exercise_version=?", (key.candidate, key.exercise, key.sha256, key.exercise_version),
        ).fetchone()
        if row is None:
            return None
        status, attempts, reason, report = row
        return Stored(key, status, attempts, reason, Report.from_json(report) if report else None)

    def save_graded(self, key: Key, source: str, report: Report, attempts: int) -> None:
        self._put(key, source, "graded", attempts, "", report.to_json())

    def save_not_graded(self, key: Key, source: str, reason: str, attempts: int, report: Report | None = None) -> None:
        """No score. ``report`` is kept when there is one to read (a check error: which check broke, and how)."""
        self._put(key, source, "not_graded", attempts, reason, report.to_json() if report is not None else None)

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM gradings").fetchone()[0]

    def close(self) -> None:
        self.db.close()

    def _put(self, key: Key, source: str, status: str, attempts: int, reason: str, report: str | None) -> None:
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        self.db.execute(
            "INSERT INTO gradings VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO UPDATE SET source=excluded.source, "
            "status=excluded.status, attempts=excluded.attempts, reason=excluded.reason, report=excluded.report, "
            "updated_at=excluded.updated_at",
            (key.candidate, key.exercise, key.sha256, key.exercise_version, source, status, attempts, reason,
             report, now),
        )
