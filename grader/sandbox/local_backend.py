"""The local sandbox: the same worker in a subprocess with rlimits. NOT isolated.

For practising without Docker. It applies what the OS offers (address space,
CPU time, file size, open files) and the grader's call deadlines (charged to the
worker's session, its children included, where /proc shows them; the wall clock
elsewhere), but the candidate's code runs as you, with your files and network. It
says so on every report it produces, and names each limit it could not put in force.

It runs wherever Python does: the worker applies its own rlimits (no fork
hook), a thread reads its stdout (no ``select`` on pipes, which Windows lacks),
and :mod:`grader.processes` starts and kills its process group.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from grader import processes
from grader.exercise import Limits
from grader.sandbox.accounting import Meter, session_meter
from grader.sandbox.client import Transport
from grader.sandbox.staging import Staged, worker_argv

NOT_ISOLATED = ("graded with the local sandbox: candidate code ran as your user, "
                "with your files and network (not isolated); use --sandbox docker for isolation")

#: What each limit means to a reader of the report.
LIMIT_WORDS = {"RLIMIT_AS": "memory", "RLIMIT_CPU": "CPU time", "RLIMIT_FSIZE": "file size",
               "RLIMIT_NOFILE": "open files"}

_CHUNK = 64 * 1024
_QUEUED_CHUNKS = 64  # at most 4 MiB read ahead of the judge; then the worker's writes block


def rlimits_for(limits: Limits) -> dict[str, tuple[int, int]]:
    """The resource limits the local sandbox applies, by ``resource.RLIMIT_*`` name."""
    mb = 1024 * 1024
    return {
        # torch maps far more address space than it touches; allow 4x the memory budget.
        "RLIMIT_AS": (limits.memory_mb * 4 * mb, limits.memory_mb * 4 * mb),
        "RLIMIT_CPU": (int(limits.grading_timeout_s) + 1, int(limits.grading_timeout_s) + 1),
        "RLIMIT_FSIZE": (limits.fsize_mb * mb, limits.fsize_mb * mb),
        "RLIMIT_NOFILE": (limits.nofile, limits.nofile),
    }


@dataclass(frozen=True)
class RlimitPlan:
    """The limits this platform can put in force, and why the others cannot be."""

    wanted: dict[str, tuple[int, int]] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)  # RLIMIT_* name -> reason in plain words


def plan_rlimits(limits: Limits) -> RlimitPlan:
    """Split :func:`rlimits_for` into what to ask the worker for and what this platform lacks."""
    try:
        import resource
    except ImportError:
        reason = "this platform has no `resource` module (Windows)"
        return RlimitPlan({}, {name: reason for name in rlimits_for(limits)})
    wanted, unavailable = {}, {}
    for name, value in rlimits_for(limits).items():
        if not hasattr(resource, name):
            unavailable[name] = f"this platform's `resource` module has no {name}"
        elif name == "RLIMIT_AS" and sys.platform == "darwin":
            unavailable[name] = "macOS does not enforce an address-space limit"
        else:
            wanted[name] = value
    return RlimitPlan(wanted, unavailable)


def limit_warnings(unavailable: Mapping[str, str], refused: Mapping[str, str]) -> list[str]:
    """One report warning per limit not in force: ``unavailable`` on this platform (the host's plan), or
    ``refused`` inside the worker (its hello's ``rlimits_failed``, validated as text by ``grader.sandbox.selfreport``)."""
    missing = {**unavailable, **refused}
    return [f"local sandbox: no {LIMIT_WORDS.get(name, name)} limit here ({name}: {why}); "
            "the wall-clock deadlines still apply" for name, why in sorted(missing.items())]


class LocalTransport(Transport):
    """A worker subprocess; a daemon thread moves its stdout into a queue the judge reads with a deadline."""

    def __init__(self, proc: subprocess.Popen, workdir: tempfile.TemporaryDirectory):
        self.proc = proc
        self._workdir = workdir
        self._chunks: queue.Queue[bytes] = queue.Queue(_QUEUED_CHUNKS)
        self._pending = b""
        self._eof = False
        self._closing = threading.Event()
        self._reader = threading.Thread(target=self._pump, name="local-sandbox-reader", daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        """Read until end of stream; only this thread touches (and finally closes) the stdout pipe."""
        stream = self.proc.stdout
        try:
            fd = stream.fileno()
            while not self._closing.is_set():
                try:
                    chunk = os.read(fd, _CHUNK)
                except OSError:
                    chunk = b""
                if not self._offer(chunk) or not chunk:
                    return
        finally:
            try:
                stream.close()
            except OSError:
                pass

    def _offer(self, chunk: bytes) -> bool:
        while not self._closing.is_set():
            try:
                self._chunks.put(chunk, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read(self, n: int, deadline: float) -> bytes:
        if not self._pending and not self._eof:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            try:
                self._pending = self._chunks.get(timeout=remaining)
            except queue.Empty:
                raise TimeoutError from None
            self._eof = not self._pending
        data, self._pending = self._pending[:n], self._pending[n:]
        return data

    def exit_reason(self) -> str:
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "the worker stopped answering"
        if code < 0:
            try:
                return f"killed by signal {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"

    def meter(self) -> Meter:
        """The worker's session's CPU time and run delays from /proc: its children are charged too."""
        return session_meter(self.proc.pid, cpu_rate=float(os.cpu_count() or 1))

    def close(self) -> None:
        self._closing.set()
        if self.proc.poll() is None:
            processes.kill_group(self.proc)
        self.proc.wait()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self._reader.join(timeout=2)  # it closes stdout; a grandchild still holding the pipe keeps it open
        self._workdir.cleanup()


def local_starter(staged: Staged, forbidden: list[str], limits: Limits, plan: RlimitPlan | None = None,
                  kernels: dict[str, list[str]] | None = None):
    """A function that starts one local worker per call (the Sandbox calls it again after a crash)."""
    if plan is None:
        plan = plan_rlimits(limits)

    def start() -> LocalTransport:
        workdir = tempfile.TemporaryDirectory(prefix="grader-local-")
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "PYTHONPATH": str(staged.lib),
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": workdir.name,
            "TMPDIR": workdir.name,
            "OMP_NUM_THREADS": str(max(1, int(limits.cpus))),
        }
        if "SYSTEMROOT" in os.environ:  # Windows: Python cannot start without it
            env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
        proc = subprocess.Popen(
            worker_argv(sys.executable, str(staged.root), forbidden, plan.wanted, kernels),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=workdir.name, env=env, **processes.group_popen_kwargs(),
        )
        return LocalTransport(proc, workdir)

    return start
