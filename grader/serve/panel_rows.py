"""An assessment as a batch: its hand-ins made into the batch's rows, and published as a batch publishes them.

The panel reads an assessment exactly as it reads ``grader batch``'s output folder: the
panel page (``index.html``: scores, flags, diagnosis, item analysis), ``similarity.html``,
``summary.csv``, ``results.jsonl``, ``items.csv`` and each hand-in's panel scorecard with its
interview questions (``grader.batch.publish``). The folder is rebuilt when a hand-in's grading
has changed since it was last built. A result is shown only when its row verifies under the
panel's key; a hand-in the infrastructure failed is "not graded", never a 0.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import threading
from pathlib import Path

from sqlalchemy import select

from grader.batch.layout import Found, Layout, found_file
from grader.batch.model import Row, RowStatus, flags_for
from grader.batch.runner import Batch
from grader.evidence.signing import Key
from grader.host.grading import is_untouched_stub
from grader.serve import queue
from grader.serve.exercises import Exercises
from grader.serve.models import Assessment, Grading, Invite
from grader.serve.sealed import stored_report
from grader.serve.takehome import exercises_of

#: The marker in a built folder: which state of the hand-ins it shows.
BUILT = ".built"
_locks: dict[int, threading.Lock] = {}
_locks_lock = threading.Lock()


def not_handed_in(i: Invite) -> str:
    if i.revoked_at is not None:
        return "revoked before handing in"
    return "not handed in yet (invited, not started)" if i.started_at is None else "not handed in yet (working)"


def row_for(found: Found | None, candidate: str, exercise: str, g: Grading | None, key: Key | None,
            exercises: Exercises, why_none: str) -> Row:
    """The batch row of one candidate's hand-in of one exercise (``found``: its file; None: none yet)."""
    if g is None or found is None:
        return Row(candidate, exercise, RowStatus.MISSING, reason=why_none)
    row = Row(candidate, exercise, found.problem or RowStatus.GRADED, reason=found.reason, sha256=found.sha256,
              source=f"{candidate}/{exercise}/{g.filename}", attempts=g.attempts)
    if g.status in (queue.QUEUED, queue.RUNNING):
        row.status, row.reason = RowStatus.NOT_GRADED, f"being graded now ({g.status}): this page updates when it ends"
        return row
    report, problem = stored_report(g, key)
    if problem:
        row.status, row.reason = RowStatus.NOT_GRADED, f"{problem}; not shown (grade it again from the assessment's page)"
        return row
    if report is None:
        row.status, row.reason = RowStatus.NOT_GRADED, f"{g.reason}; grade it again from the assessment's page"
        return row
    if report.check_errors:
        names = ", ".join(c.name or c.id for c in report.check_errors)
        row.status, row.report, row.flags = RowStatus.CHECK_ERROR, report, flags_for(report)
        row.reason = f"check error in {names}: a bug in the exercise's checks, not the submission's; no score"
        return row
    row.report, row.score, row.max_score, row.flags = report, report.score, report.max_score, flags_for(report)
    if row.status is RowStatus.GRADED and (report.untouched_stub or is_untouched_stub(exercises.get(exercise),
                                                                                       g.source)):
        row.status, row.score, row.reason = RowStatus.UNTOUCHED_STUB, 0.0, "the exercise's stub, unchanged"
    return row


def as_batch(s, a: Assessment, key: Key | None, exercises: Exercises) -> tuple[Batch, str]:
    """The assessment's hand-ins as a batch, and a digest of what it was made from (to know when to rebuild)."""
    names = [e.name for e in exercises_of(s, a.id)]
    invites = s.scalars(select(Invite).where(Invite.assessment_id == a.id).order_by(Invite.name)).all()
    latest: dict[tuple[int, str], Grading] = {}
    for g in s.scalars(select(Grading).where(Grading.assessment_id == a.id, Grading.kind == queue.HANDIN)
                       .order_by(Grading.id)):
        latest[(g.invite_id, g.exercise)] = g
    layout, rows, digest = Layout(exercises=names), [], hashlib.sha256()
    for i in invites:
        for name in names:
            g = latest.get((i.id, name))
            found = found_file(i.name, name, Path(g.filename), g.source) if g is not None else None
            if found is not None:
                layout.found.append(found)
            rows.append(row_for(found, i.name, name, g, key, exercises, not_handed_in(i)))
            digest.update(json.dumps([i.id, i.name, i.started_at is not None, i.revoked_at is not None, name,
                                      g and (g.id, g.status, g.attempts, g.signature, g.reason,
                                             hashlib.sha256((g.report or "").encode()).hexdigest())],
                                     default=str).encode())
    return Batch(layout=layout, rows=rows), digest.hexdigest()


def results_folder(data: Path, assessment_id: int) -> Path:
    return data / "assessments" / str(assessment_id) / "results"


def build(s, a: Assessment, key: Key | None, exercises: Exercises, data: Path) -> Path:
    """The assessment's results folder, rebuilt (beside it, then swapped in) when its hand-ins changed."""
    from grader.batch.publish import publish
    from grader.batch.published import published_files, solution_folders

    with _locks_lock:
        lock = _locks.setdefault(a.id, threading.Lock())
    with lock:
        batch, digest = as_batch(s, a, key, exercises)
        folder = results_folder(data, a.id)
        marker = folder / BUILT
        if marker.is_file() and marker.read_text(encoding="ascii").strip() == digest:
            return folder
        loaded = {name: exercises.get(name) for name in batch.layout.exercises}
        answers, notes = published_files(loaded, solution_folders(exercises.catalog.exercises, []))
        folder.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".results-", dir=folder.parent))
        try:
            publish(batch, work, loaded, answers, notes)
            (work / BUILT).write_text(digest + "\n", encoding="ascii")
            old = folder.with_name(f".old-{digest[:12]}")
            if folder.exists():
                folder.rename(old)
            work.rename(folder)
            shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return folder
