"""The batch driver: plan from the folder and the store, grade what is missing, keep every answer.

The driver alone writes the store, one report at a time as each grading ends,
so a batch killed at any moment loses only the gradings in flight. A grading the
infrastructure failed is retried ``retries`` more times in this run; if it still
fails it is stored as not graded (never a score) and the next run tries again.
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path

from grader.batch.jobs import Job, not_graded
from grader.batch.layout import Found, Layout, discover
from grader.batch.model import Row, RowStatus, flags_for
from grader.batch.store import Key, Store
from grader.exercise import Exercise
from grader.reports.model import Report
from grader.sandbox.gpu import plan_gpus
from grader.sandbox.oci_runtime import DEFAULT as DEFAULT_RUNTIME
from grader.sandbox.oci_runtime import resolve_runtime

#: Extra tries, in one run, for a grading the infrastructure failed.
DEFAULT_RETRIES = 2


class Listener:
    """What the CLI hears while a batch runs (a progress bar); every method is optional."""

    def planned(self, *, to_grade: int, already: int) -> None: ...

    def started(self, found: Found) -> None:
        """A grading began (called from the engine's worker thread; on Ray, when the task was handed over)."""

    def graded(self, found: Found, report: Report) -> None: ...

    def retrying(self, found: Found, reason: str, attempt: int) -> None: ...


@dataclass
class Batch:
    layout: Layout
    rows: list[Row] = field(default_factory=list)
    graded_now: int = 0
    reused: int = 0


def version_key(ex: Exercise, runtime: str | None = None) -> str:
    """The exercise version results are keyed by: the author's version and the content's hash.

    A runtime other than runc is part of it, so a batch rerun under runsc grades
    again rather than reusing runc's results; runc and the local sandbox (None)
    add nothing, so stores written before runtimes were keyed keep their rows.
    """
    key = f"{ex.version}+{ex.fingerprint[:16]}"
    return key if runtime in (None, DEFAULT_RUNTIME) else f"{key};runtime={runtime}"


def run_batch(submissions: Path, store: Store, engine, *, exercises: dict[str, Exercise], only: list[str] | None = None,
              sandbox: str = "docker", gpus: str | None = None, seed: int | None = None, image: str | None = None,
              runtime: str | None = None, retries: int = DEFAULT_RETRIES, listener: Listener | None = None) -> Batch:
    """``runtime`` is resolved here, once, and travels in every job, so no worker reads its own ``$GRADER_RUNTIME``."""
    listener = listener or Listener()
    runtime = resolve_runtime(runtime) if sandbox == "docker" else None
    known = {name: ex.config.exercise.submission for name, ex in exercises.items()}
    batch = Batch(layout=discover(submissions, known=known, only=only))
    jobs: dict[Key, tuple[Found, Job]] = {}
    for found in batch.layout.gradable:
        ex = exercises[found.exercise]
        key = Key(found.candidate, found.exercise, found.sha256, version_key(ex, runtime))
        stored = store.get(key)
        if stored is not None and stored.status == "graded":
            batch.reused += 1
            continue
        job = Job(key, str(ex.root), found.path.name, found.source, sandbox, gpus, seed, image, runtime,
                  shown_path=f"{found.candidate}/{found.exercise}/{found.path.name}", fingerprint=ex.fingerprint)
        jobs[key] = (found, job)
    listener.planned(to_grade=len(jobs), already=batch.reused)
    _grade_all(jobs, store, engine, exercises, retries, listener, batch)
    batch.rows = [_row(found, exercises, store, runtime) for found in batch.layout.found]
    return batch


def _grade_all(jobs, store, engine, exercises, retries, listener, batch) -> None:
    attempts: dict[Key, int] = {}
    running: dict[Future, Key] = {}

    def submit(key: Key) -> None:
        found, job = jobs[key]
        attempts[key] = attempts.get(key, 0) + 1
        running[engine.submit(job, num_gpus=_num_gpus(exercises[found.exercise], job.gpus),
                              on_start=lambda: listener.started(found))] = key

    for key in jobs:
        submit(key)
    while running:
        done, _ = wait(list(running), return_when=FIRST_COMPLETED)
        for future in done:
            key = running.pop(future)
            found, job = jobs[key]
            report = _result(future, job)
            reason = (report.not_graded_reason if not report.graded
                      else _mismatch(report, version_key(exercises[found.exercise]), job))
            source = f"{found.candidate}/{found.exercise}/{found.path.name}"
            if reason is None:
                store.save_graded(key, source, report, attempts[key])
                batch.graded_now += 1
                listener.graded(found, report)
            elif attempts[key] <= retries:
                listener.retrying(found, reason, attempts[key])
                submit(key)
            else:
                store.save_not_graded(key, source, reason, attempts[key])
                listener.graded(found, not_graded(job, reason))


def _result(future: Future, job: Job) -> Report:
    try:
        return future.result()
    except Exception as e:  # a Ray task that lost its worker more often than Ray retries, say
        return not_graded(job, f"the grading task failed: {type(e).__name__}: {e}")


def _mismatch(report: Report, expected: str, job: Job) -> str | None:
    """A worker with different exercise files would grade against other checks, and one that used
    another OCI runtime would be stored under this one's key: neither is this batch's score."""
    env = report.environment
    version = f"{env.exercise_version}+{env.exercise_fingerprint[:16]}"
    if version != expected:
        return f"the worker graded exercise version {version}, the batch expects {expected}"
    # A file the judge answered alone (the stub, a parse error) ran in no sandbox: it has no runtime to match.
    if job.sandbox == "docker" and env.sandbox != "none" and env.oci_runtime != job.runtime:
        return f"the worker graded under OCI runtime {env.oci_runtime or '(none)'}, the batch expects {job.runtime}"
    return None


def _num_gpus(ex: Exercise, gpus: str | None) -> float:
    request = plan_gpus(ex.config.exercise.gpu, gpus).request
    if request is None:
        return 0
    return len(request.device_ids) or max(request.count, 1)


def _row(found: Found, exercises: dict[str, Exercise], store: Store, runtime: str | None) -> Row:
    row = Row(found.candidate, found.exercise, found.problem or RowStatus.GRADED, reason=found.reason,
              sha256=found.sha256, source=f"{found.candidate}/{found.exercise}/{found.path.name}" if found.path else None)
    if found.source is None:
        return row
    stored = store.get(Key(found.candidate, found.exercise, found.sha256,
                           version_key(exercises[found.exercise], runtime)))
    if stored is None:  # interrupted before this one was graded
        row.status, row.reason = RowStatus.NOT_GRADED, "not graded yet: the batch was interrupted; rerun it"
        return row
    row.attempts = stored.attempts
    if stored.status != "graded":
        row.status = RowStatus.NOT_GRADED
        row.reason = f"not graded after {stored.attempts} attempts ({stored.reason}); rerun the batch"
        return row
    row.report, row.score, row.max_score = stored.report, stored.report.score, stored.report.max_score
    row.flags = flags_for(stored.report)
    return row
