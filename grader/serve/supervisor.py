"""The server's housekeeping: its worker processes, kept running, and the queue's and the clock's rounds.

On start it puts back the gradings of workers that died with an earlier server (a process
of this host that is gone, or any worker whose lease ran out), then starts its own workers.
A worker that exits unexpectedly has its gradings put back at once and is replaced. Every
few seconds it puts back gradings whose lease ran out (a worker on another machine that
died) and hands in, with their last saved drafts, candidates whose time is up.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field

from sqlalchemy import select

from grader.child_python import python_argv, child_environment
from grader.processes import pid_alive
from grader.evidence.signing import Key
from grader.serve import queue, takehome
from grader.serve.db import Database
from grader.serve.exercises import Exercises
from grader.serve.models import Worker
from grader.serve.settings import ServeSettings, WorkerSettings

#: How often the supervisor looks at its workers, and at the queue's leases and the candidates' clocks (seconds).
WATCH_S = 0.5
ROUNDS_S = 2.0
#: A worker that dies sooner than this after its start is replaced only after this long (no restart storm).
CRASH_PAUSE_S = 5.0


@dataclass
class Process:
    worker_id: str
    proc: subprocess.Popen
    started: float = field(default_factory=time.monotonic)


class Supervisor:
    def __init__(self, settings: ServeSettings, db: Database, exercises: Exercises, key: Key):
        self.settings, self.db, self.exercises, self.key = settings, db, exercises, key
        self.processes: list[Process] = []
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    @property
    def slots(self) -> list[int]:
        """Slots per worker process: one process per grading locally, one process holding them all for Ray."""
        n = self.settings.workers
        if n == 0:
            return []
        return [n] if self.settings.engine == "ray" else [1] * n

    def start(self) -> None:
        self.put_back_the_dead()
        for slots in self.slots:
            self.processes.append(self._spawn(slots))
        self.thread = threading.Thread(target=self._watch, name="grader-serve-supervisor", daemon=True)
        self.thread.start()

    def put_back_the_dead(self) -> int:
        """Gradings of this host's workers whose process is gone, and of any worker whose lease ran out."""
        with self.db.read() as s:
            mine = s.execute(select(Worker.id, Worker.pid).where(Worker.host == socket.gethostname()[:255],
                                                                 Worker.stopped_at.is_(None))).all()
        dead = [wid for wid, pid in mine if not pid_alive(pid)]
        return queue.put_back(self.db, self.key, dead=dead, stale=True)

    def _spawn(self, slots: int) -> Process:
        worker = WorkerSettings(worker_id=uuid.uuid4().hex, database=self.db.url,
                                exercise_root=self.settings.exercise_root, engine=self.settings.engine,
                                ray_address=self.settings.ray_address, slots=slots, lease_s=self.settings.lease_s,
                                poll_s=self.settings.poll_s)
        proc = subprocess.Popen(python_argv(sys.executable, "-m", "grader.serve.worker"), stdin=subprocess.PIPE,
                                env=child_environment(os.environ), cwd=str(self.settings.data),
                                start_new_session=True)  # Ctrl-C reaches the server, which stops its workers
        proc.stdin.write(worker.model_dump_json().encode())
        proc.stdin.close()
        return Process(worker.worker_id, proc)

    def _watch(self) -> None:
        last_round = 0.0
        while not self.stopping.wait(WATCH_S):
            for i, p in enumerate(self.processes):
                if p.proc.poll() is None or self.stopping.is_set():
                    continue
                queue.put_back(self.db, self.key, dead=[p.worker_id], stale=False)
                if time.monotonic() - p.started < CRASH_PAUSE_S:
                    print(f"grader serve: worker {p.worker_id[:8]} exited ({p.proc.returncode}) just after its "
                          f"start; starting another in {CRASH_PAUSE_S:g} s", file=sys.stderr, flush=True)
                    if self.stopping.wait(CRASH_PAUSE_S):
                        return
                slots = self.slots[i] if i < len(self.slots) else 1
                self.processes[i] = self._spawn(slots)
            if time.monotonic() - last_round >= ROUNDS_S:
                last_round = time.monotonic()
                self.rounds()

    def rounds(self) -> None:
        """The queue's leases and the candidates' clocks (an error here is told, and the next round tries again)."""
        try:
            queue.put_back(self.db, self.key, stale=True)
            takehome.hand_in_expired(self.db, self.exercises)
        except Exception as e:  # a database that went away for a moment: said, never the end of the server
            print(f"grader serve: housekeeping failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)

    def stop(self, timeout: float = 20.0) -> None:
        """Stop every worker (each puts its gradings back), and put back what a worker that had to be killed held."""
        self.stopping.set()
        for p in self.processes:
            if p.proc.poll() is None:
                p.proc.terminate()
        deadline = time.monotonic() + timeout
        for p in self.processes:
            try:
                p.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.proc.kill()
                p.proc.wait()
        if self.processes:
            queue.put_back(self.db, self.key, dead=[p.worker_id for p in self.processes], stale=False)
        if self.thread is not None:
            self.thread.join(timeout=5)
