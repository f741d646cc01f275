"""The local sandbox: the same worker in a subprocess with rlimits. NOT isolated.

For practising without Docker. It applies what the OS offers (address space,
CPU time, file size, open files) and the grader's wall-clock deadlines, but the
candidate's code runs as you, with your files and network. It says so on every
report it produces.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import tempfile
import time

from grader.exercise import Limits
from grader.sandbox.client import Transport
from grader.sandbox.staging import Staged, worker_argv

NOT_ISOLATED = ("graded with the local sandbox: candidate code ran as your user, "
                "with your files and network (not isolated); use --sandbox docker for isolation")


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


def _apply_rlimits(wanted: dict[str, tuple[int, int]]) -> None:
    import resource

    for name, value in wanted.items():
        which = getattr(resource, name, None)
        if which is not None:
            resource.setrlimit(which, value)


class LocalTransport(Transport):
    def __init__(self, proc: subprocess.Popen, workdir: tempfile.TemporaryDirectory):
        self.proc = proc
        self._workdir = workdir

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read(self, n: int, deadline: float) -> bytes:
        fd = self.proc.stdout.fileno()
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise TimeoutError
        return os.read(fd, n)

    def exit_reason(self) -> str:
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "the worker stopped answering"
        if code < 0:
            return f"killed by signal {signal.Signals(-code).name}"
        return f"exit code {code}"

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self._workdir.cleanup()


def local_starter(staged: Staged, forbidden: list[str], limits: Limits):
    """A function that starts one local worker per call (the Sandbox calls it again after a crash)."""

    def start() -> LocalTransport:
        workdir = tempfile.TemporaryDirectory(prefix="grader-local-")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": str(staged.lib),
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": workdir.name,
            "TMPDIR": workdir.name,
            "OMP_NUM_THREADS": str(max(1, int(limits.cpus))),
        }
        proc = subprocess.Popen(
            worker_argv(sys.executable, str(staged.root), forbidden),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=workdir.name, env=env, start_new_session=True,
            preexec_fn=lambda: _apply_rlimits(rlimits_for(limits)),
        )
        return LocalTransport(proc, workdir)

    return start
