"""The batch driver: plan from the folder and the store, grade what is missing, keep every answer.

The driver alone writes the store, one report at a time as each grading ends,
so a batch killed at any moment loses only the gradings in flight. A grading the
infrastructure failed is retried ``retries`` more times in this run; if it still
fails it is stored as not graded (never a score) and the next run tries again.
A stored result that does not verify under the panel's key is never reused or
republished: it is set aside (kept in the store as evidence) and graded again,
since a score recomputed from the submission is the only one a panel can defend.
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path

from grader.batch.jobs import Job, not_graded
from grader.batch.layout import Found, Layout, discover
from grader.batch.model import Row, RowStatus, flags_for
from grader.batch.store import SEAL_WORDS, Key, Store, Stored
from grader.evidence.signing import Seal
from grader.exercise import Exercise
from grader.host.grading import is_untouched_stub
from grader.reports.model import Report
from grader.backends.gpu import gpu_request
from grader.backends.oci_runtime import DEFAULT as DEFAULT_RUNTIME
from grader.wire.grant import GpuRequest
from grader.backends.oci_runtime import resolve_runtime

#: Extra tries, in one run, for a grading the infrastructure failed.
DEFAULT_RETRIES = 2


class Listener:
    """What the CLI hears while a batch runs (a progress bar); every method is optional."""

    def planned(self, *, to_grade: int, already: int) -> None: ...

    def started(self, found: Found) -> None:
        """A grading began (called from the engine's worker thread; on Ray, when the task was handed over)."""

    def graded(self, found: Found, report: Report) -> None: ...

    def retrying(self, found: Found, reason: str, attempt: int) -> None: ...


@dataclass(frozen=True)
class SetAside:
    """A stored result this run did not believe: moved to the store's ``set_aside`` table and graded again."""

    candidate: str
    exercise: str
    seal: Seal
    why: str

    @property
    def line(self) -> str:
        return f"{self.candidate}/{self.exercise}: the stored result {self.why}; set aside and graded again"


@dataclass
class Batch:
    layout: Layout
    rows: list[Row] = field(default_factory=list)
    graded_now: int = 0
    reused: int = 0
    set_aside: list[SetAside] = field(default_factory=list)  # stored rows that did not verify, graded again

    def set_aside_lines(self) -> list[str]:
        """For the terminal and the panel's problems box: each edited row by name; rows that are merely
        unsigned or signed with another key (a store from before signing, another machine's key), counted."""
        lines = [s.line for s in self.set_aside if s.seal is Seal.EDITED]
        for seal in (Seal.UNSIGNED, Seal.OTHER_KEY, Seal.NO_KEY):
            if n := sum(s.seal is seal for s in self.set_aside):
                lines.append(f"{n} stored result{'s' if n != 1 else ''} not vouched for by this machine's key "
                             f"({SEAL_WORDS[seal].removeprefix('is ')}): graded again")
        return lines


def version_key(ex: Exercise, runtime: str | None = None, sandbox: str = "docker") -> str:
    """The exercise version results are keyed by: the author's version and the content's hash.

    Where it was graded is part of it: the local sandbox (not isolated) adds ``;sandbox=local``,
    so a Docker run grades again rather than republish local results as its own, and a
    runtime other than runc adds ``;runtime=...``, so a rerun under runsc grades again rather
    than reuse runc's. Docker under runc adds nothing, so stores written before either was
    keyed keep their rows (a stored row's own record of its sandbox is checked too: ``_reusable``).
    """
    key = f"{ex.version}+{ex.fingerprint[:16]}"
    if sandbox == "local":
        return f"{key};sandbox=local"
    return key if runtime in (None, DEFAULT_RUNTIME) else f"{key};runtime={runtime}"


def run_batch(submissions: Path, store: Store, engine, *, exercises: dict[str, Exercise], only: list[str] | None = None,
              sandbox: str = "docker", gpus: GpuRequest | None = None, seed: int | None = None,
              image: str | None = None,
              runtime: str | None = None, retries: int = DEFAULT_RETRIES, listener: Listener | None = None) -> Batch:
    """``runtime`` is resolved here, once, and travels in every job, so no worker reads its own ``$GRADER_RUNTIME``."""
    listener = listener or Listener()
    runtime = resolve_runtime(runtime) if sandbox == "docker" else None
    known = {name: ex.config.exercise.submission for name, ex in exercises.items()}
    batch = Batch(layout=discover(submissions, known=known, only=only))
    jobs: dict[Key, tuple[Found, Job]] = {}
    for found in batch.layout.gradable:
        ex = exercises[found.exercise]
        key = Key(found.candidate, found.exercise, found.sha256, version_key(ex, runtime, sandbox))
        stored = store.get(key)
        if stored is not None and not stored.trusted:  # never republished: kept aside, and graded again
            store.set_aside(key, stored)
            batch.set_aside.append(SetAside(found.candidate, found.exercise, stored.seal, stored.problem))
        elif _reusable(stored, sandbox, runtime):
            batch.reused += 1
            continue
        job = Job(key, str(ex.root), found.path.name, found.source, sandbox, gpus, seed, image, runtime,
                  shown_path=f"{found.candidate}/{found.exercise}/{found.path.name}", fingerprint=ex.fingerprint)
        jobs[key] = (found, job)
    listener.planned(to_grade=len(jobs), already=batch.reused)
    _grade_all(jobs, store, engine, exercises, retries, listener, batch)
    batch.rows = [_row(found, exercises, store, runtime, sandbox) for found in batch.layout.found]
    return batch


def _reusable(stored: Stored | None, sandbox: str, runtime: str | None) -> bool:
    """A stored result this run may publish as its own: graded where this run grades (a row stored before the
    sandbox was part of the key says so in its report), or a check error under this very exercise version
    (the same checks break the same way: fixing the check changes the version, and the row is graded again)."""
    if stored is None or stored.report is None:
        return False
    env = stored.report.environment
    # "none": the judge answered alone (the stub, a parse error): no candidate code ran, in any sandbox.
    where = env.sandbox == "none" or (env.sandbox == sandbox and (sandbox != "docker"
                                                                  or (env.oci_runtime or DEFAULT_RUNTIME) == runtime))
    return where and (stored.status == "graded" or bool(stored.report.check_errors))


def _grade_all(jobs, store, engine, exercises, retries, listener, batch) -> None:
    attempts: dict[Key, int] = {}
    running: dict[Future, Key] = {}

    def submit(key: Key) -> None:
        found, job = jobs[key]
        attempts[key] = attempts.get(key, 0) + 1
        running[engine.submit(job, num_gpus=num_gpus(exercises[found.exercise], job.gpus),
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
            if report.check_errors and _mismatch(report, version_key(exercises[found.exercise]), job) is None:
                # The exercise's own bug: a retry breaks the same way. Kept with its report (which check, how).
                store.save_not_graded(key, source, report.not_graded_reason or "check error", attempts[key], report)
                listener.graded(found, report)
            elif reason is None:
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
    # A file the judge answered alone (the stub, a parse error) ran in no sandbox: no sandbox or runtime to match.
    alone = env.sandbox == "none"
    if env.sandbox != job.sandbox and not alone:
        return f"the worker graded in the {env.sandbox or '(unknown)'} sandbox, the batch asked for {job.sandbox}"
    if job.sandbox == "docker" and not alone and env.oci_runtime != job.runtime:
        return f"the worker graded under OCI runtime {env.oci_runtime or '(none)'}, the batch expects {job.runtime}"
    return None


def num_gpus(ex: Exercise, gpus: GpuRequest | None) -> float:
    """The GPUs a grading of ``ex`` asks a Ray task for, from the exercise's policy and the request."""
    request, _ = gpu_request(ex.config.exercise.gpu, gpus)
    if request is None:
        return 0
    return len(request.device_ids) or max(request.count, 1)


def _row(found: Found, exercises: dict[str, Exercise], store: Store, runtime: str | None, sandbox: str) -> Row:
    row = Row(found.candidate, found.exercise, found.problem or RowStatus.GRADED, reason=found.reason,
              sha256=found.sha256, source=f"{found.candidate}/{found.exercise}/{found.path.name}" if found.path else None,
              provenance=found.provenance)
    if found.source is None:
        return row
    ex = exercises[found.exercise]
    stored = store.get(Key(found.candidate, found.exercise, found.sha256, version_key(ex, runtime, sandbox)))
    if stored is None or (stored.report is not None and not _reusable(stored, sandbox, runtime)):
        # interrupted before this one was graded (or only an older store's result from another sandbox exists)
        row.status, row.reason = RowStatus.NOT_GRADED, "not graded yet: the batch was interrupted; rerun it"
        return row
    row.attempts = stored.attempts
    if not stored.trusted:  # changed under the run (it was verified or written by it a moment ago)
        row.status, row.reason = RowStatus.NOT_GRADED, f"the stored result {stored.problem}; rerun the batch"
        return row
    if stored.report is not None and stored.report.check_errors:
        names = ", ".join(c.name or c.id for c in stored.report.check_errors)
        row.status, row.report, row.flags = RowStatus.CHECK_ERROR, stored.report, flags_for(stored.report)
        row.reason = (f"check error in {names}: a bug in the exercise's checks, not the submission's; no score "
                      "until the check is fixed (then rerun the batch)")
        return row
    if stored.status != "graded":
        row.status = RowStatus.NOT_GRADED
        row.reason = f"not graded after {stored.attempts} attempts ({stored.reason}); rerun the batch"
        return row
    row.report, row.score, row.max_score = stored.report, stored.report.score, stored.report.max_score
    row.flags = flags_for(stored.report)
    if row.status is RowStatus.GRADED and (stored.report.untouched_stub or is_untouched_stub(ex, found.source)):
        row.status, row.score = RowStatus.UNTOUCHED_STUB, 0.0
        row.reason = "the exercise's stub, unchanged: nothing was attempted"
    return row
