"""A warm judge: torch, pytest and hypothesis imported once, a fresh forked process per grading.

A cold ``python -m pytest`` pays seconds of imports before the first check; so one server process
(``grader.host.zygote``) imports the heavy modules and forks a clean child per judge run, a separate
process with its own pytest session, killed by process group at its deadline. The server runs with a
fixed hash seed, so every judge forked from it iterates sets the same way: a regrade reproduces.
See docs/decisions/warm-judge.md.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import uuid

from grader.child_python import child_environment, python_argv
from grader.host import warm_wire


def available() -> bool:
    """The server needs ``os.fork`` (not on Windows)."""
    return hasattr(os, "fork")


class Judge:
    """One judge run in a child of the server: wait for it, or kill it."""

    def __init__(self, judge_id: str):
        self.id = judge_id
        self.pid: int | None = None
        self.exitcode: int | None = None
        self.started = threading.Event()
        self.done = threading.Event()

    def wait(self, timeout: float) -> bool:
        """True if the judge ended within ``timeout`` seconds."""
        return self.done.wait(timeout)

    def kill(self) -> None:
        self.started.wait(10)
        if self.pid is not None and not self.done.is_set():
            for kill in (os.killpg, os.kill):  # the group, or the child itself before it led one
                try:
                    kill(self.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        self.done.wait(10)


class _Server:
    def __init__(self):
        env = child_environment(dict(os.environ, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1"))
        # It imports everything its judges will use, so it starts where nothing can shadow a module:
        # -P and a folder of its own, never the caller's (grader.child_python).
        self.home = tempfile.TemporaryDirectory(prefix="grader-judge-server-")
        # No PDEATHSIG here: it fires when the *thread* that started us exits. The server
        # exits instead when its stdin closes, which happens when this whole process is gone.
        # Its stderr is a file of its own: what it says as it dies with the grader that started it (Ctrl-C while it
        # was still importing, a reply to a grader that is gone) must not reach the user's terminal after the
        # command's last line.
        with open(os.path.join(self.home.name, "server.log"), "wb") as log:
            self.proc = subprocess.Popen(python_argv(sys.executable, "-m", "grader.host.zygote"),
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env,
                                         cwd=self.home.name, start_new_session=True)
        self.judges: dict[str, Judge] = {}
        self.lock = threading.Lock()
        self.closed = False  # set once the reply pipe ends: the server is dead or dying
        threading.Thread(target=self._read_replies, name="grader-judge-server", daemon=True).start()

    def alive(self) -> bool:
        return not self.closed and self.proc.poll() is None

    def start(self, request: type[warm_wire.JudgeRun] | type[warm_wire.AuditRun], **fields) -> Judge:
        """Fork one child for a ``request`` of that type, with these fields (its id is made here)."""
        judge = Judge(uuid.uuid4().hex)
        line = warm_wire.line(request(id=judge.id, **fields))
        with self.lock:
            self.judges[judge.id] = judge
            if self.closed:  # died after start_judge checked it: this judge never runs
                self._finish(judge.id, -1)
                return judge
            try:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
            except OSError:
                self._finish(judge.id, -1)
        return judge

    def _read_replies(self) -> None:
        for line in self.proc.stdout:
            message = warm_wire.REPLY.validate_json(line)
            judge = self.judges.get(message.id)
            if judge is None:
                continue
            if isinstance(message, warm_wire.Forked):
                judge.pid = message.pid
                judge.started.set()
            else:
                self._finish(message.id, message.exit)
        with self.lock:  # the server died: every judge it had is gone too, and no new one is taken
            self.closed = True
            pending = list(self.judges)
        for judge_id in pending:
            self._finish(judge_id, -1)

    def _finish(self, judge_id: str, code: int) -> None:
        judge = self.judges.pop(judge_id, None)
        if judge is not None:
            judge.exitcode = code
            judge.started.set()
            judge.done.set()


_server: _Server | None = None
_server_lock = threading.Lock()


def _running_server() -> _Server:
    """The warm server, started on first use and restarted if it died."""
    global _server
    with _server_lock:
        if _server is None or not _server.alive():
            _server = _Server()
        return _server


def start_judge(argv: list[str], *, cwd: str, log: str) -> Judge:
    """Fork ``pytest argv`` from the warm server."""
    return _running_server().start(warm_wire.JudgeRun, argv=argv, cwd=cwd, log=log, env=judge_environment())


def run_audit(request_json: str, *, timeout: float) -> str | None:
    """A subset check (``grader.subset.audit.AuditRequest`` as JSON) run in a child of the warm server, which
    has torch imported for its identity lookups; its ``SourceAudit`` as JSON, or None if the child gave none
    (the server died, the child failed or ran past ``timeout``): the caller then runs the same code itself."""
    with tempfile.TemporaryDirectory(prefix="grader-audit-") as tmp:
        given, answer = os.path.join(tmp, "request.json"), os.path.join(tmp, "audit.json")
        with open(given, "w", encoding="utf-8") as f:
            f.write(request_json)
        child = _running_server().start(warm_wire.AuditRun, input=given, out=answer,
                                        log=os.path.join(tmp, "audit.log"))
        if not child.wait(timeout):
            child.kill()
            return None
        if child.exitcode != 0 or not os.path.exists(answer):
            return None
        with open(answer, encoding="utf-8") as f:
            return f.read()


def judge_environment() -> dict[str, str]:
    """A judge's environment: the grader's as it is now, without pytest and hypothesis settings
    that would change a grading, and with the fixed hash seed and one torch thread (the warm
    server sets both in itself; a cold judge gets them from here)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", OMP_NUM_THREADS="1")
    return child_environment(env)


def kill_all() -> int:
    """Kill every judge still running (an interrupted batch); returns how many there were."""
    server = _server
    if server is None:
        return 0
    judges = list(server.judges.values())
    for judge in judges:
        judge.kill()
    return len(judges)


def die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent dies (kill -9 included), so no judge outlives it."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
