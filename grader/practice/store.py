"""The practice database: one SQLite file in the user's data directory.

Two tables: ``attempts`` (one row per graded ``grader submit``) and ``clocks``
(one running timed-mode clock per exercise). SQLite because it needs no server,
survives a crash mid-write, and a candidate can open it with any tool.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from grader.datadir import data_dir

FILENAME = "practice.sqlite"
SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    exercise TEXT NOT NULL,
    exercise_version TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    at TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    sandbox TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    elapsed_s REAL,
    over_limit INTEGER,
    checks TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_by_exercise ON attempts (exercise, id);
CREATE TABLE IF NOT EXISTS clocks (
    exercise TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    minutes REAL NOT NULL
);
"""


@contextlib.contextmanager
def connect(path: Path | None = None):
    """A connection with the schema in place, closed on exit (``path`` defaults to the data directory's file)."""
    db = sqlite3.connect(path or data_dir() / FILENAME, isolation_level=None, timeout=10)
    try:
        db.row_factory = sqlite3.Row
        db.executescript(SCHEMA)
        yield db
    finally:
        db.close()
