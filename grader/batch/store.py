"""The batch's results, in SQLite inside the output folder: what makes a batch resumable.

A row is keyed by (candidate, exercise, submission sha256, exercise version, which names the sandbox
and runtime when not Docker under runc), so a rerun grades only what is new or changed and local
results are never republished by a Docker run. A report is written in one transaction when its
grading ends, so a killed batch loses only gradings in flight; infrastructure failure is stored as
``not_graded``, never a score. Only the driver process writes here. Each row is signed (an HMAC with
the panel's key, ``grader.evidence.signing``): one that does not verify under this machine's key is
never reused but set aside (``set_aside``, with why) and graded again.
"""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from grader.evidence.signing import ALGORITHM, Seal, seal_of, signing_key_for
from grader.evidence.signing import Key as SigningKey
from grader.reports.model import Report
from grader.reports.derived import report_from_json

FILENAME = "grader.sqlite"
#: The columns a row's signature covers, in order (all of them but the signature itself).
COLUMNS = ("candidate", "exercise", "sha256", "exercise_version", "source", "status", "attempts", "reason", "report",
           "updated_at")
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
    signature TEXT,
    PRIMARY KEY (candidate, exercise, sha256, exercise_version)
);
CREATE TABLE IF NOT EXISTS set_aside (
    candidate TEXT, exercise TEXT, sha256 TEXT, exercise_version TEXT, source TEXT, status TEXT, attempts INTEGER,
    reason TEXT, report TEXT, updated_at TEXT, signature TEXT,
    seal TEXT NOT NULL,
    why TEXT NOT NULL,
    set_aside_at TEXT NOT NULL
);
"""
_DOMAIN = "grader store row v1"


@dataclass(frozen=True)
class Key:
    """A row's key (the signing key is ``SigningKey``)."""

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
    seal: Seal = Seal.SIGNED
    problem: str = ""  # why the row cannot be believed ("the stored row <problem>"); empty when it can

    @property
    def trusted(self) -> bool:
        return self.seal is Seal.SIGNED and not self.problem


def sign_row(signing_key: SigningKey, values: tuple) -> str:
    """The signature column for a row's ``COLUMNS`` values: ``hmac-sha256:<key id>:<mac>``."""
    return f"{ALGORITHM}:{signing_key.id}:{signing_key.mac(_DOMAIN, _encode(values))}"


def row_seal(signing_key: SigningKey | None, values: tuple, signature: str | None) -> Seal:
    """Whether a row's signature (None: unsigned) verifies under ``signing_key`` (None: this machine has none)."""
    algorithm, _, rest = (signature or "").partition(":")
    key_id, _, mac = rest.partition(":")
    if signature and (algorithm != ALGORITHM or not key_id):
        return Seal.EDITED
    return seal_of(signing_key, key_id if signature else None, lambda k: k.verifies(mac, _DOMAIN, _encode(values)))


#: What each seal means for a stored row, as a predicate: "the stored row <words>".
SEAL_WORDS = {
    Seal.EDITED: "does not match its signature: it was edited after the batch stored it",
    Seal.UNSIGNED: "is unsigned: stored before results were signed, or by a grader without a key",
    Seal.OTHER_KEY: "is signed with another key (another panel machine's, or forged)",
    Seal.NO_KEY: "is signed, but this machine has no key to check it",
}


class Store:
    def __init__(self, folder: Path, *, signing_key: SigningKey | None = None):
        self.path = folder / FILENAME
        self.signing_key = signing_key or signing_key_for(folder, "batch folder")
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")  # readers (a panel's script) never block the writer
        self.db.execute("PRAGMA synchronous=FULL")  # a stored report survives a power cut
        self.db.executescript(SCHEMA)
        if "signature" not in {row[1] for row in self.db.execute("PRAGMA table_info(gradings)")}:
            self.db.execute("ALTER TABLE gradings ADD COLUMN signature TEXT")  # a store from before signing

    def get(self, key: Key) -> Stored | None:
        row = self.db.execute(
            f"SELECT {', '.join(COLUMNS)}, signature FROM gradings WHERE candidate=? AND exercise=? "
            "AND sha256=? AND exercise_version=?", (key.candidate, key.exercise, key.sha256, key.exercise_version),
        ).fetchone()
        if row is None:
            return None
        values, signature = tuple(row[:-1]), row[-1]
        status, attempts, reason, text = values[5], values[6], values[7], values[8]
        seal = row_seal(self.signing_key, values, signature)
        report, problem = None, "" if seal is Seal.SIGNED else SEAL_WORDS[seal]
        if text:
            try:
                report = report_from_json(text)
            except ValueError as e:  # pydantic's ValidationError, or a headline that disagrees with its checks
                report, problem = None, problem or f"holds a report the grader did not write: {e}"
        return Stored(key, status, attempts, reason, report, seal, problem)

    def save_graded(self, key: Key, source: str, report: Report, attempts: int) -> None:
        self._put(key, source, "graded", attempts, "", report.to_json())

    def save_not_graded(self, key: Key, source: str, reason: str, attempts: int, report: Report | None = None) -> None:
        """No score. ``report`` is kept when there is one to read (a check error: which check broke, and how)."""
        self._put(key, source, "not_graded", attempts, reason, report.to_json() if report is not None else None)

    def set_aside(self, key: Key, stored: Stored) -> None:
        """Move a row that cannot be believed out of ``gradings`` into ``set_aside``, with why, in one transaction:
        it is never republished, and the evidence of the edit is kept for the panel."""
        now = _now()
        where = "candidate=? AND exercise=? AND sha256=? AND exercise_version=?"
        args = (key.candidate, key.exercise, key.sha256, key.exercise_version)
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(f"INSERT INTO set_aside SELECT {', '.join(COLUMNS)}, signature, ?, ?, ? FROM gradings "
                            f"WHERE {where}", (stored.seal.value, stored.problem, now, *args))
            self.db.execute(f"DELETE FROM gradings WHERE {where}", args)

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM gradings").fetchone()[0]

    def close(self) -> None:
        self.db.close()

    def _put(self, key: Key, source: str, status: str, attempts: int, reason: str, report: str | None) -> None:
        values = (key.candidate, key.exercise, key.sha256, key.exercise_version, source, status, attempts, reason,
                  report, _now())
        self.db.execute(
            "INSERT INTO gradings VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO UPDATE SET source=excluded.source, "
            "status=excluded.status, attempts=excluded.attempts, reason=excluded.reason, report=excluded.report, "
            "updated_at=excluded.updated_at, signature=excluded.signature",
            (*values, sign_row(self.signing_key, values)),
        )


def _encode(values: tuple) -> str:
    return json.dumps(list(values), ensure_ascii=False, separators=(",", ":"))


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
