"""Regrade a whole ``grader batch`` output folder and say, row by row, whether the outcomes still stand.

The evidence is the folder's SQLite store: every export is rebuilt from it, and the exported files are
also compared with it (``grader.evidence.exported``), so an edited export shows. Nothing here writes
into the folder: the store is copied and read elsewhere (opening a WAL database, even read-only, may
create files beside it). A submission whose bytes no longer hash as recorded is reported changed and
not graded. A row that does not match its signature under this machine's key is **edited** (and still
regraded); an unsigned or foreign-key row is compared with a note; rows a batch set aside are listed.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path, PurePosixPath

from grader.batch.outdir import candidate_dir
from grader.batch.store import COLUMNS, FILENAME, SEAL_WORDS, row_seal
from grader.errors import GraderError, UsageError
from grader.evidence.regrade import SubmissionChanged, regrade
from grader.exercise import NotAnExerciseName
from grader.evidence.exported import read_tables, table_differences
from grader.evidence.signing import Seal, load_key
from grader.progress import Work
from grader.reports.compare import decision_differences
from grader.reports.derived import EditedReport
from grader.reports.model import Report
from grader.reports.derived import report_from_json


class Outcome(str, Enum):
    MATCHES = "matches"
    DIFFERS = "differs"  # a check's outcome (or the exercise, or the export) differs
    EDITED = "edited"  # the stored row does not match its signature, or its report disagrees with its checks
    CHANGED = "changed"  # the submission's sha256 is not the one stored: not regraded
    MISSING = "missing"  # no submission file where the batch found it
    REFUSED = "refused"  # the stored report is not one to act on: unreadable, or its exercise is not a catalog name
    NOT_GRADED = "not_graded"  # the regrade itself could not grade (infrastructure, exercise gone)
    SKIPPED = "skipped"  # stored as not graded by the batch: nothing to compare
    SUPERSEDED = "superseded"  # an older grading of this (candidate, exercise): a later row replaced it

    @property
    def counts_against(self) -> bool:
        """Whether this row means the folder's evidence does not stand as recorded."""
        return self in (Outcome.DIFFERS, Outcome.EDITED, Outcome.CHANGED, Outcome.MISSING, Outcome.REFUSED)


@dataclass
class RowRegrade:
    candidate: str
    exercise: str
    sha256: str
    source: str
    outcome: Outcome
    differences: list[str] = field(default_factory=list)  # each names the check (or the exercise/export)
    problem: str = ""  # why a row was not compared
    notes: list[str] = field(default_factory=list)


@dataclass
class BatchRegrade:
    rows: list[RowRegrade]

    def count(self, outcome: Outcome) -> int:
        return sum(r.outcome is outcome for r in self.rows)

    @property
    def all_match(self) -> bool:
        return all(r.outcome in (Outcome.MATCHES, Outcome.SKIPPED, Outcome.SUPERSEDED) for r in self.rows)


@dataclass(frozen=True)
class _Stored:
    candidate: str
    exercise: str
    sha256: str
    source: str
    status: str
    reason: str
    report: str | None
    current: bool
    seal: Seal = Seal.SIGNED
    set_aside: str = ""  # why an earlier batch run set this row aside (then it is not current)


def regrade_batch(out_dir: Path, *, submissions: Path | None = None, exercise_root: Path | None = None,
                  sandbox: str | None = None, runtime: str | None = None, jobs: int = 1,
                  work: Work | None = None) -> BatchRegrade:
    """Regrade every current graded row of ``out_dir``'s store; rows come back in the store's order.

    ``submissions`` is the folder the batch graded (``<candidate>/<exercise>/<file>.py``);
    the store records each file's path relative to it. ``sandbox`` and ``runtime`` override
    each report's recorded sandbox kind and OCI runtime, as in :func:`regrade`. ``work`` hears
    each row start and end, for a progress display.
    """
    stored = read_store(out_dir)
    if submissions is None and any(not PurePosixPath(s.source).is_absolute() for s in stored):
        raise UsageError(f"The store in {str(out_dir)!r} records submissions relative to the folder the batch "
                         "graded, which it does not name.",
                         hint="Pass that folder as the second argument: grader regrade OUTDIR SUBMISSIONS.")
    tables = read_tables(out_dir)
    work = work or Work("regrading")
    work.plan(len(stored))

    def one(s: _Stored) -> RowRegrade:
        label = f"{s.candidate}/{s.exercise}"
        work.start(label)
        try:
            return _one(s, out_dir, submissions, exercise_root, sandbox, runtime, tables)
        finally:
            work.finish(label)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        rows = list(pool.map(one, stored))
    return BatchRegrade(rows)


def read_store(out_dir: Path) -> list[_Stored]:
    """Every row of the folder's store, read from a private copy, each with its seal under this machine's key;
    the latest per (candidate, exercise) is current. Rows a batch run set aside come last."""
    db = Path(out_dir) / FILENAME
    if not db.is_file():
        raise UsageError(f"{str(out_dir)!r} holds no {FILENAME}: it is not a `grader batch` output folder.")
    signing_key = load_key(create=False)
    with tempfile.TemporaryDirectory(prefix="grader-regrade-") as tmp:
        for suffix in ("", "-wal"):  # the WAL holds committed rows not yet checkpointed
            if Path(f"{db}{suffix}").is_file():
                shutil.copyfile(f"{db}{suffix}", Path(tmp) / f"{FILENAME}{suffix}")
        conn = sqlite3.connect(Path(tmp) / FILENAME)
        try:
            signed = "signature" in {r[1] for r in conn.execute("PRAGMA table_info(gradings)")}
            rows = conn.execute(f"SELECT {', '.join(COLUMNS)}, {'signature' if signed else 'NULL'} FROM gradings "
                                "ORDER BY candidate, exercise, updated_at, rowid").fetchall()
            aside = conn.execute(f"SELECT {', '.join(COLUMNS)}, signature, why FROM set_aside ORDER BY rowid"
                                 ).fetchall() if _has_table(conn, "set_aside") else []
        except sqlite3.DatabaseError as e:
            raise UsageError(f"Cannot read {db}: {e}.") from None
        finally:
            conn.close()
    latest = {(r[0], r[1]): i for i, r in enumerate(rows)}
    out = [_stored(r, signing_key, current=latest[(r[0], r[1])] == i) for i, r in enumerate(rows)]
    return out + [_stored(r[:-1], signing_key, current=False, set_aside=r[-1] or "set aside") for r in aside]


def _stored(r: tuple, signing_key, *, current: bool, set_aside: str = "") -> _Stored:
    values, signature = tuple(r[:len(COLUMNS)]), r[len(COLUMNS)]
    candidate, exercise, sha256, _, source, status, _, reason, report, _ = values
    return _Stored(candidate, exercise, sha256, source, status, reason, report, current,
                   row_seal(signing_key, values, signature), set_aside)


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone() is not None


def _one(s: _Stored, out_dir: Path, submissions: Path | None, exercise_root: Path | None,
         sandbox: str | None, runtime: str | None, tables: dict) -> RowRegrade:
    row = RowRegrade(s.candidate, s.exercise, s.sha256, s.source, Outcome.SKIPPED)
    if s.set_aside:
        edited = s.seal is Seal.EDITED
        row.outcome = Outcome.EDITED if edited else Outcome.SUPERSEDED
        row.problem = (f"a batch run set this stored row aside (it {s.set_aside}) and graded the submission "
                       "again; the row is kept in the store's set_aside table")
        return row
    if not s.current:
        row.outcome, row.problem = Outcome.SUPERSEDED, "a later grading of this candidate's exercise replaced it"
        return row
    edited = [f"the stored row {SEAL_WORDS[s.seal]}"] if s.seal is Seal.EDITED else []
    if s.seal not in (Seal.SIGNED, Seal.EDITED):
        row.notes.append(f"the stored row {SEAL_WORDS[s.seal]}; no signature vouches for it, so the regrade is "
                         "the check")
    if s.status != "graded" or not s.report:
        if edited:
            row.outcome, row.problem = Outcome.EDITED, edited[0]
            return row
        row.problem = f"stored as not graded ({s.reason or 'no reason recorded'})"
        return row
    try:
        report = report_from_json(s.report)
    except EditedReport as e:  # its headline disagrees with its own checks: named, and nothing to regrade against
        row.outcome, row.problem = Outcome.EDITED, "; ".join(edited + [str(e)])
        return row
    except ValueError as e:  # pydantic's ValidationError: an edited store
        row.outcome, row.problem = Outcome.REFUSED, f"the stored report is not a grading report ({type(e).__name__})"
        return row
    path = _submission(s, submissions, report.environment.submission_name)
    if path is None:
        row.outcome, row.problem = Outcome.MISSING, f"no submission file at {s.source}"
        return row
    try:
        result = regrade(report, path, exercise_root=exercise_root, sandbox=sandbox, runtime=runtime)
    except NotAnExerciseName as e:  # checked before anything is loaded
        row.outcome, row.problem = Outcome.REFUSED, str(e)
        return row
    except SubmissionChanged as e:  # checked before anything is graded
        row.outcome = Outcome.CHANGED
        row.problem = f"{path} changed since the batch: sha256 {e.actual}, stored {e.recorded}"
        return row
    except GraderError as e:
        row.outcome, row.problem = Outcome.NOT_GRADED, str(e)
        return row
    row.notes += result.notes
    if not result.new.graded:
        row.outcome, row.problem = Outcome.NOT_GRADED, result.new.not_graded_reason or "not graded"
        return row
    row.differences = (result.differences + _export_differences(out_dir, s, report)
                       + table_differences(tables, s.candidate, s.exercise, report))
    row.outcome = Outcome.EDITED if edited else Outcome.DIFFERS if row.differences else Outcome.MATCHES
    row.problem = "; ".join(edited)
    return row


def _submission(s: _Stored, submissions: Path | None, name: str) -> Path | None:
    """The stored path (under ``submissions``), else the batch layout's ``<candidate>/<exercise>/<name>``."""
    tries = [Path(s.source)] if submissions is None else [Path(submissions) / s.source]
    if submissions is not None and name:
        tries.append(Path(submissions) / s.candidate / s.exercise / name)
    return next((p for p in tries if p.is_file()), None)


def _export_differences(out_dir: Path, s: _Stored, stored: Report) -> list[str]:
    """The exported panel JSON must say what the store says; an edited export is a difference too.

    Folders written before candidates moved under ``candidates/`` keep theirs at ``<candidate>/``.
    """
    tries = [candidate_dir(Path(out_dir), s.candidate), Path(out_dir) / s.candidate]
    base = next((b for b in tries if (b / f"{s.exercise}.json").is_file()), None)
    if base is None:
        return []
    name = (base / f"{s.exercise}.json").relative_to(out_dir).as_posix()
    try:
        exported = report_from_json((base / f"{s.exercise}.json").read_text(encoding="utf-8"))
    except EditedReport as e:
        return [f"{name} {e}"]
    except (OSError, ValueError) as e:
        return [f"{name} cannot be read as a report ({type(e).__name__})"]
    return [f"{name} disagrees with the store: {line}"
            for line in decision_differences(stored, exported, sides=("store's", "export's"))]
