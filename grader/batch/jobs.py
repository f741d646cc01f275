"""One grading as data, and the function that performs it wherever it is sent.

A ``Job`` carries the submission's bytes rather than its path, so a Ray worker on
another machine grades exactly the file the driver hashed, and the OCI runtime the
driver resolved, so a worker never grades under its own ``$GRADER_RUNTIME``.
``grade_job`` never raises: whatever goes wrong in the grader or the infrastructure
comes back as a not-graded report with the reason, and the driver decides whether
to retry.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.batch.store import Key
from grader.reports.model import Report
from grader.wire.grant import GpuRequest


@dataclass(frozen=True)
class Job:
    key: Key
    exercise_root: str  # the exercise folder; on a Ray cluster, the same path must exist on every node
    filename: str
    source: bytes
    sandbox: str = "docker"
    gpus: GpuRequest | None = None
    seed: int | None = None
    image: str | None = None
    runtime: str | None = None  # the driver's resolved OCI runtime; None outside Docker
    shown_path: str | None = None  # how scorecards name the file: <candidate>/<exercise>/<file> in SUBMISSIONS
    #: The exercise as the driver loaded it from its catalog: a node whose copy differs refuses it before any
    #: check loads (not graded, naming both), rather than grading against other checks.
    fingerprint: str | None = None
    #: Start the next grading's sandbox while this one runs (``grader.backends.prestart``): a batch on this machine.
    start_next: bool = False
    #: ``"visible"``: a practice run of the visible checks only (``grader serve``); a batch grades ``"all"``.
    checks: str = "all"


def grade_job(job: Job) -> Report:
    """Grade ``job`` in this process (a batch thread, or a Ray worker)."""
    from grader.errors import GraderError
    from grader.host.grading import grade

    try:
        with tempfile.TemporaryDirectory(prefix="grader-batch-") as tmp:
            path = Path(tmp) / job.filename
            path.write_bytes(job.source)
            return grade(Path(job.exercise_root), path, sandbox=job.sandbox, gpus=job.gpus, seed=job.seed,
                         image=job.image, runtime=job.runtime, shown_path=job.shown_path,
                         fingerprint=job.fingerprint, start_next=job.start_next, checks=job.checks)
    except GraderError as e:
        return not_graded(job, str(e) + (f" {e.hint}" if e.hint else ""))
    except Exception as e:  # a grader bug is not the candidate's fault either: never a score
        return not_graded(job, f"the grader failed: {type(e).__name__}: {e}")


def not_graded(job: Job, reason: str) -> Report:
    return Report(exercise=job.key.exercise, graded=False, not_graded_reason=reason)
