"""A grading worker: pulls gradings from the queue, grades each as a batch does, and records how it went.

A worker is a process of its own (``python -P -m grader.serve.worker``, told its
``WorkerSettings`` on standard input), so killing one loses only the gradings it holds,
which the queue puts back. It grades through the batch's engines
(``grader.batch.engines``): ``local`` runs ``grade_job`` in this process, ``ray`` sends
the same job to a Ray cluster as ``grader batch --engine ray`` does. While gradings run it
renews their leases; on SIGTERM it stops its judges and puts its gradings back at once.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait

from grader.batch.engines import open_engine
from grader.batch.jobs import Job
from grader.batch.runner import num_gpus
from grader.batch.store import Key
from grader.evidence.signing import load_key
from grader.reports.model import Report
from grader.serve import queue
from grader.serve.db import Database
from grader.serve.exercises import Exercises
from grader.serve.models import Worker, now
from grader.serve.settings import WorkerSettings


#: How much lower a worker's CPU priority is than the web server's: pages stay quick while gradings queue.
WORKER_NICENESS = 10


class GradingWorker:
    def __init__(self, settings: WorkerSettings, *, db: Database | None = None, engine=None):
        self.settings = settings
        self.id = settings.worker_id
        self.db = db or Database(settings.database, pool_size=2)
        self.exercises = Exercises(settings.exercise_root)
        self.key = load_key(create=True)
        self.engine = engine or open_engine(settings.engine, jobs=settings.slots, address=settings.ray_address)
        self.running: dict[Future, queue.Claimed] = {}
        self._beat = 0.0
        self._runtime: str | None = None
        with self.db.write() as s:
            s.add(Worker(id=self.id, host=socket.gethostname()[:255], pid=os.getpid(), engine=settings.engine,
                         started_at=now(), heartbeat_at=now()))

    def step(self) -> int:
        """Claim what fits, wait up to ``poll_s`` for a grading to end, record those that did: how many ended."""
        while len(self.running) < self.settings.slots:
            claimed = queue.claim(self.db, self.id, lease_s=self.settings.lease_s)
            if claimed is None:
                break
            self.running[self._submit(claimed)] = claimed
        if time.monotonic() - self._beat > self.settings.lease_s / 4:
            queue.heartbeat(self.db, self.id, [c.id for c in self.running.values()], lease_s=self.settings.lease_s)
            self._beat = time.monotonic()
        if not self.running:
            time.sleep(self.settings.poll_s)
            return 0
        done, _ = wait(list(self.running), timeout=self.settings.poll_s, return_when=FIRST_COMPLETED)
        for future in done:
            claimed = self.running.pop(future)
            queue.finish(self.db, self.id, claimed, _result(future, claimed), self.key)
        return len(done)

    def _submit(self, claimed: queue.Claimed) -> Future:
        try:
            job, gpus = self.job_for(claimed)
        except Exception as e:  # the exercise is gone from the catalog, say: not graded, and why
            failed: Future = Future()
            failed.set_result(not_graded(claimed, f"the grading could not start: {str(e).splitlines()[0]}"))
            return failed
        return self.engine.submit(job, num_gpus=gpus)

    def job_for(self, claimed: queue.Claimed) -> tuple[Job, float]:
        """The batch's job for ``claimed``, and the GPUs it asks a Ray task for."""
        import hashlib

        from grader.wire.grant import parse_gpus

        ex = self.exercises.get(claimed.exercise)
        gpus = parse_gpus(claimed.gpus) if claimed.gpus else None
        runtime = self.runtime() if claimed.sandbox == "docker" else None
        job = Job(Key(claimed.candidate, claimed.exercise, hashlib.sha256(claimed.source).hexdigest(),
                      ex.fingerprint), str(ex.root), claimed.filename, claimed.source, claimed.sandbox, gpus,
                  runtime=runtime, shown_path=f"{claimed.candidate}/{claimed.exercise}/{claimed.filename}",
                  fingerprint=claimed.fingerprint or None, checks="visible" if claimed.kind == queue.RUN else "all")
        return job, num_gpus(ex, gpus)

    def runtime(self) -> str:
        if self._runtime is None:
            from grader.backends.oci_runtime import resolve_runtime

            self._runtime = resolve_runtime(None)
        return self._runtime

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self.step()

    def close(self) -> None:
        """Stop: judges killed, this worker's gradings put back in the queue now, not when their leases run out."""
        from grader.host import warm

        warm.kill_all()
        queue.put_back(self.db, self.key, dead=[self.id], stale=False)
        self.engine.close(cancel=True)
        self.db.dispose()


def not_graded(claimed: queue.Claimed, reason: str) -> Report:
    return Report(exercise=claimed.exercise, graded=False, not_graded_reason=reason)


def _result(future: Future, claimed: queue.Claimed) -> Report:
    try:
        return future.result()
    except Exception as e:  # a Ray task that lost its worker more often than Ray retries, say
        return not_graded(claimed, f"the grading task failed: {type(e).__name__}: {e}")


def main() -> None:
    """``python -P -m grader.serve.worker`` with ``WorkerSettings`` as JSON on standard input."""
    from grader.host import warm

    settings = WorkerSettings.model_validate_json(sys.stdin.read())
    warm.die_with_parent()  # a server killed outright takes its workers with it; a restart puts their rows back
    os.nice(WORKER_NICENESS)  # gradings (and the judges and sandboxes they start) yield the CPU to the pages
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    worker = GradingWorker(settings)
    try:
        worker.run(stop)
    finally:
        worker.close()
    os._exit(0)  # a grading thread the judge's kill left waiting does not hold the process


if __name__ == "__main__":
    main()
