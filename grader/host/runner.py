"""Run an exercise's checks in a child pytest process and read back what happened.

The child is ``pytest checks/ -p grader.judge.plugin ...``, forked from a warm
server that has torch and pytest imported already (``grader.host.warm``), with an
empty ini file (no project configuration leaks in), a fixed hypothesis seed and
a hard wall-clock deadline enforced from here. Its outcomes arrive as JSON lines
(see ``grader.judge.plugin``); its exit code and printed text mean nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from grader import processes
from grader.child_python import python_argv
from grader.exercise import Exercise
from grader.host import live, warm
from grader.wire.events import (CheckFinished, Collected, Infra, JudgeEvent, LoadFailed, MalformedEvent,
                                 SandboxUsed, parse_event)
from grader.wire.grant import GpuRequest
from grader.wire.request import GradingRequest, Prestarted
from grader.wire.spec import CheckSpec
from grader.reports.model import CheckResult, LoadError
from grader.wire.selfreport import SandboxSummary


#: How often a judge with a listener (``on_event``) is looked at for new events, in seconds.
EVENT_POLL_S = 0.2


@dataclass
class JudgeRun:
    collected: list[CheckSpec] = field(default_factory=list)
    results: dict[str, CheckResult] = field(default_factory=dict)
    infra: str | None = None  # why the judge could not grade, one line
    infra_detail: str | None = None  # the panel's detail of it
    sandbox: SandboxSummary | None = None  # None: the judge opened no sandbox (or ended before saying)
    timed_out: bool = False
    log_tail: str = ""
    load_error: LoadError | None = None  # the file raised while the sandbox imported it


def grading_request(exercise: Exercise, submission: Path, *, sandbox: str, seed: int, grading_id: str,
                    gpus: GpuRequest | None = None, image: str | None = None, runtime: str | None = None,
                    local_gpu_env: dict[str, str] | None = None, prestarted: tuple[str, Path] | None = None,
                    only: list[str] | None = None, events: Path | None = None) -> GradingRequest:
    """The one value a judge reads for this grading. ``prestarted``: ``(container id, staged folder)`` of this
    grading's sandbox, started ahead (``grader.backends.prestart``); ``only``: the check ids to run."""
    return GradingRequest(
        exercise=str(exercise.root), fingerprint=exercise.fingerprint, submission=str(submission), sandbox=sandbox,
        seed=seed, grading_id=grading_id, events=str(events) if events else None, image=image, runtime=runtime,
        gpus=gpus, local_gpu_env=local_gpu_env, only=only,
        prestarted=Prestarted(container=prestarted[0], stage=str(prestarted[1])) if prestarted else None)


def pytest_args(exercise: Exercise, request_file: Path, *, seed: int | None, ini: Path) -> list[str]:
    """The judge's pytest arguments (no interpreter): the same for a warm or a cold judge. Everything about the
    grading is in ``request_file`` (a :class:`GradingRequest`); the rest is how pytest itself is run."""
    return [
        str(exercise.checks_dir),
        "-c", str(ini), "--rootdir", str(exercise.checks_dir), "--confcutdir", str(exercise.checks_dir),
        "-p", "grader.judge.plugin", "-p", "no:cacheprovider", "-p", "no:randomly",
        "-q", "--no-header", "--tb=short", "-W", "ignore::DeprecationWarning",
        "-W", "ignore::pytest.PytestAssertRewriteWarning",
        *([f"--hypothesis-seed={seed}"] if seed is not None else []),
        "--grader-request", str(request_file),
    ]


def judge_args(exercise: Exercise, request: GradingRequest, folder: Path) -> list[str]:
    """:func:`pytest_args` for ``request``, with the files they name (an empty ini, the request) written to
    ``folder``."""
    ini = folder / "pytest.ini"
    ini.write_text("[pytest]\n")
    return pytest_args(exercise, request.write(folder / "request.json"), seed=request.seed, ini=ini)


def pytest_argv(exercise: Exercise, request: GradingRequest, folder: Path) -> list[str]:
    """A cold judge's command line: ``python -P -m pytest`` plus :func:`judge_args`."""
    return python_argv(sys.executable, "-m", "pytest", *judge_args(exercise, request, folder))


def run_checks(exercise: Exercise, request: GradingRequest, *, extra_args: tuple[str, ...] = (),
               timeout: float | None = None, on_event: Callable[[JudgeEvent], None] | None = None) -> JudgeRun:
    """One judge run of ``request`` (its ``events`` are this run's own file). ``extra_args`` go to its pytest (the
    catalog passes ``--collect-only``); ``timeout`` defaults to the exercise's grading deadline; ``on_event``
    hears the events as they come."""
    sandbox, grading_id = request.sandbox, request.grading_id or ""
    with tempfile.TemporaryDirectory(prefix="grader-run-") as tmp:
        events, log = Path(tmp) / "events.jsonl", Path(tmp) / "judge.log"
        args = judge_args(exercise, request.model_copy(update={"events": str(events)}), Path(tmp)) + list(extra_args)
        judge = warm.start_judge(args, cwd=tmp, log=str(log)) if warm.available() else _ColdJudge(args, tmp, log)
        run = JudgeRun()
        try:
            run.timed_out = not _wait(judge, exercise.limits.grading_timeout_s if timeout is None else timeout,
                                      events, on_event)
        except BaseException:  # Ctrl-C: take the judge and its sandbox down with us
            judge.kill()
            _reap(sandbox, grading_id)
            raise
        if run.timed_out:
            judge.kill()
            _reap(sandbox, grading_id)
        _read_events(events, run)
        run.log_tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        return run


def _wait(judge, timeout: float, events: Path, on_event) -> bool:
    """``judge.wait(timeout)``; with ``on_event``, in short steps that pass on each new event between them."""
    if on_event is None:
        return judge.wait(timeout)
    tail, deadline = live.EventTail(events), time.monotonic() + timeout
    while True:
        ended = judge.wait(max(0.0, min(EVENT_POLL_S, deadline - time.monotonic())))
        for event in tail.new_events():
            on_event(event)
        if ended or time.monotonic() >= deadline:
            return ended


class _ColdJudge:
    """``python -P -m pytest`` in a new process, where the platform has no fork; waits and kills like ``warm.Judge``.

    It runs in the grading's own temporary folder, like a warm judge (``grader.child_python``)."""

    def __init__(self, args: list[str], cwd: str, log: Path):
        kwargs = processes.group_popen_kwargs()
        if hasattr(os, "fork"):  # a preexec_fn needs fork (not on Windows)
            kwargs["preexec_fn"] = warm.die_with_parent
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(python_argv(sys.executable, "-m", "pytest", *args), stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=subprocess.STDOUT, env=warm.judge_environment(), cwd=cwd,
                                         **kwargs)

    def wait(self, timeout: float) -> bool:
        try:
            self.proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def kill(self) -> None:
        processes.kill_group(self.proc)
        self.proc.wait()


def _read_events(path: Path, run: JudgeRun) -> None:
    """Fill ``run`` from the judge's events, each validated: a malformed one makes the run not graded, saying which."""
    if not path.exists():
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            event = parse_event(line)  # None: a line cut off by a kill (the check it described has no outcome)
        except MalformedEvent as e:
            run.infra = run.infra or str(e)
            continue
        if isinstance(event, Collected):
            run.collected = list(event.checks)
        elif isinstance(event, CheckFinished):
            run.results[event.result.id] = event.result
        elif isinstance(event, LoadFailed):
            run.load_error = run.load_error or event.error
        elif isinstance(event, Infra) and run.infra is None:
            run.infra, run.infra_detail = event.reason, event.detail
        elif isinstance(event, SandboxUsed):
            run.sandbox = event.summary


def _reap(sandbox: str, grading_id: str) -> None:
    """Remove the containers of a judge we had to kill (it could not clean up after itself)."""
    if sandbox != "docker":
        return
    try:
        from grader.backends import docker_backend, engine

        docker_backend.reap(engine.connect(timeout=10), grading_id=grading_id)
    except Exception:
        pass  # the next grading's reaper removes them by owner pid
