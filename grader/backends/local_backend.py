"""The local sandbox: the same worker in a subprocess with rlimits. NOT isolated.

For practising without Docker. It applies what the OS offers (address space,
CPU time, file size, open files) and the grader's call deadlines (charged to the
worker's session, its children included, where /proc shows them; the wall clock
elsewhere), but the candidate's code runs as you, with your files and network. It
says so on every report it produces, and names each limit it could not put in force.

It can give the worker a GPU (``--gpus``, with a CUDA build of torch): the plan
(:func:`grader.backends.gpu.plan_gpus`) names the environment passed on, and the
address-space limit, which CUDA cannot start under, gives way to a watchdog on
resident memory (:mod:`grader.backends.memory_watch`). A grading without a GPU hides
every device from the worker (``CUDA_VISIBLE_DEVICES=""``), as Docker gives none.

It runs wherever Python does: the worker applies its own rlimits (no fork
hook), a thread reads its stdout (no ``select`` on pipes, which Windows lacks),
and :mod:`grader.processes` starts and kills its process group.
"""

from __future__ import annotations

import os
import queue
import shutil
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
from grader.backends import memory_watch
from grader.backends.accounting import Meter, session_meter
from grader.backends.client import Transport
from grader.backends.served import ServedStarter
from grader.backends.gpu import LocalGpuSetup
from grader.backends.staging import Staged, worker_argv
from grader.reports.warning import ReportWarning, WarningCode

#: The name a GPU grading's memory limit goes by in a plan and a report (it is no rlimit).
WATCHDOG = "resident-memory watchdog"

NOT_ISOLATED = ("graded with the local sandbox: candidate code ran as your user, "
                "with your files and network (not isolated); use --sandbox docker for isolation")

#: What each limit means to a reader of the report.
LIMIT_WORDS = {"RLIMIT_AS": "memory", "RLIMIT_CPU": "CPU time", "RLIMIT_FSIZE": "file size",
               "RLIMIT_NOFILE": "open files", WATCHDOG: "memory"}

_CHUNK = 64 * 1024
_QUEUED_CHUNKS = 64  # at most 4 MiB read ahead of the judge; then the worker's writes block


def rlimits_for(limits: Limits, *, gpu: bool = False) -> dict[str, tuple[int, int]]:
    """The resource limits the local sandbox applies, by ``resource.RLIMIT_*`` name. A GPU grading has no
    address-space limit (CUDA cannot start under one): its memory is held by the watchdog instead."""
    mb = 1024 * 1024
    out = {
        # torch maps far more address space than it touches; allow 4x the memory budget.
        "RLIMIT_AS": (limits.memory_mb * 4 * mb, limits.memory_mb * 4 * mb),
        "RLIMIT_CPU": (int(limits.grading_timeout_s) + 1, int(limits.grading_timeout_s) + 1),
        "RLIMIT_FSIZE": (limits.fsize_mb * mb, limits.fsize_mb * mb),
        "RLIMIT_NOFILE": (limits.nofile, limits.nofile),
    }
    if gpu:
        del out["RLIMIT_AS"]
    return out


@dataclass(frozen=True)
class RlimitPlan:
    """The limits this platform can put in force, and why the others cannot be."""

    wanted: dict[str, tuple[int, int]] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)  # RLIMIT_* name (or WATCHDOG) -> reason in plain words
    watch_mb: int | None = None  # a GPU grading: the resident-memory watchdog's limit, in MB


def plan_rlimits(limits: Limits, *, gpu: bool = False) -> RlimitPlan:
    """Split :func:`rlimits_for` into what to ask the worker for and what this platform lacks; for a GPU
    grading (``gpu``), the memory limit is the watchdog's, where this platform has one."""
    watch_mb, missing = None, {}
    if gpu:
        why = memory_watch.unavailable()
        if why is None:
            watch_mb = limits.memory_mb
        else:
            missing[WATCHDOG] = why
    try:
        import resource
    except ImportError:
        reason = "this platform has no `resource` module (Windows)"
        return RlimitPlan({}, {**missing, **{name: reason for name in rlimits_for(limits, gpu=gpu)}}, watch_mb)
    wanted, unavailable = {}, dict(missing)
    for name, value in rlimits_for(limits, gpu=gpu).items():
        if not hasattr(resource, name):
            unavailable[name] = f"this platform's `resource` module has no {name}"
        elif name == "RLIMIT_AS" and sys.platform == "darwin":
            unavailable[name] = "macOS does not enforce an address-space limit"
        else:
            wanted[name] = value
    return RlimitPlan(wanted, unavailable, watch_mb)


#: The judge's words for the worker's reasons (``grader.wire.selfreport.LIMIT_REFUSALS``).
REFUSAL_WORDS = {"refused": "the operating system refused it inside the worker",
                 "unknown": "the worker's platform has no such limit",
                 "unsupported": "the worker's platform has no `resource` module"}


def limit_warnings(unavailable: Mapping[str, str], refused: Mapping[str, str]) -> list[ReportWarning]:
    """One report warning per limit not in force: ``unavailable`` on this platform (the host's plan), or
    ``refused`` inside the worker (its hello's ``rlimits_failed``: a limit name and one word of
    ``LIMIT_REFUSALS``, validated by ``grader.wire.selfreport``, worded here)."""
    missing = {**unavailable, **{name: REFUSAL_WORDS.get(why, "not applied") for name, why in refused.items()}}
    return [ReportWarning(code=WarningCode.LOCAL_LIMIT, message=f"local sandbox: no {LIMIT_WORDS.get(name, name)} "
                          f"limit here ({name}: {why}); the wall-clock deadlines still apply")
            for name, why in sorted(missing.items())]


class LocalTransport(Transport):
    """A worker subprocess; a daemon thread moves its stdout into a queue the judge reads with a deadline."""

    def __init__(self, proc: subprocess.Popen, workdir: tempfile.TemporaryDirectory,
                 watch: memory_watch.MemoryWatch | None = None):
        self.proc = proc
        self._workdir = workdir
        self._watch = watch
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
        if self._watch is not None and self._watch.reason():
            return self._watch.reason()
        if code < 0:
            try:
                return f"killed by signal {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"

    def ended_by_its_limits(self) -> bool:
        return self._watch is not None and bool(self._watch.reason())

    def meter(self) -> Meter:
        """The worker's session's CPU time and run delays from /proc: its children are charged too."""
        return session_meter(self.proc.pid, cpu_rate=float(os.cpu_count() or 1))

    def close(self) -> None:
        self._closing.set()
        if self._watch is not None:
            self._watch.stop()
        processes.kill_session(self.proc)  # the server, and its workers (each a group of its own in its session)
        self.proc.wait()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self._reader.join(timeout=2)  # it closes stdout; a grandchild still holding the pipe keeps it open
        shutil.rmtree(self._workdir.name, ignore_errors=True)  # what a worker dying beside it was still removing
        try:
            self._workdir.cleanup()
        except OSError:
            pass


def worker_environment(workdir: str, staged: Staged, limits: Limits, gpu: LocalGpuSetup | None) -> dict[str, str]:
    """The worker's whole environment: nothing of the grader's but ``PATH`` (and what a GPU needs, when given one)."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "PYTHONPATH": str(staged.lib),
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": workdir,
        "TMPDIR": workdir,
        "OMP_NUM_THREADS": str(max(1, int(limits.cpus))),
        "CUDA_VISIBLE_DEVICES": "",  # no GPU unless the plan gives one, as Docker gives none without a request
    }
    if gpu is not None:
        env.update(gpu.env)
    if "SYSTEMROOT" in os.environ:  # Windows: Python cannot start without it
        env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
    return env


def local_starter(staged: Staged, forbidden: list[str], limits: Limits, plan: RlimitPlan | None = None,
                  kernels: dict[str, list[str]] | None = None, gpu: LocalGpuSetup | None = None):
    """The sandbox's workers: each a fork in a local worker server (``grader.backends.served``), a server process
    started when there is none that answers.
    ``gpu``: the plan's set-up for a GPU grading (``plan`` must then be ``plan_rlimits(limits, gpu=True)``)."""
    if plan is None:
        plan = plan_rlimits(limits, gpu=gpu is not None)
    if gpu is not None and "RLIMIT_AS" in plan.wanted:
        raise ValueError("a GPU worker cannot start under an address-space limit: plan with plan_rlimits(gpu=True)")
    single = not hasattr(os, "fork")  # no fork (Windows): each worker is a server process of its own

    def start() -> LocalTransport:
        workdir = tempfile.TemporaryDirectory(prefix="grader-local-")
        proc = subprocess.Popen(
            worker_argv(sys.executable, str(staged.root), forbidden, plan.wanted, kernels, forkserver=limits.forkserver,
                        max_frame_bytes=limits.result_mb * 1024 * 1024, one_worker=single),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=workdir.name, env=worker_environment(workdir.name, staged, limits, gpu),
            **processes.group_popen_kwargs(),
        )
        watch = None
        if plan.watch_mb is not None:
            watch = memory_watch.MemoryWatch(proc.pid, plan.watch_mb * 1024 * 1024,
                                             lambda: processes.kill_group(proc)).start()
        return LocalTransport(proc, workdir, watch)

    return ServedStarter(start, single=single)
