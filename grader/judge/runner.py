"""Run an exercise's checks in a child pytest process and read back what happened.

The child is ``python -m pytest checks/ -p grader.judge.plugin ...`` with an
empty ini file (no project configuration leaks in), a fixed hypothesis seed and
a hard wall-clock deadline enforced from here. Its outcomes arrive as JSON lines
(see ``grader.judge.plugin``); its exit code and printed text mean nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.exercise import Exercise
from grader.reports.model import CheckResult


@dataclass
class JudgeRun:
    collected: list[dict] = field(default_factory=list)
    results: dict[str, CheckResult] = field(default_factory=dict)
    infra: str | None = None
    sandbox: dict = field(default_factory=dict)
    timed_out: bool = False
    log_tail: str = ""


def pytest_argv(exercise: Exercise, submission: Path, *, sandbox: str, seed: int, events: Path, ini: Path,
                grading_id: str, gpus: str | None = None, image: str | None = None) -> list[str]:
    argv = [
        sys.executable, "-m", "pytest", str(exercise.checks_dir),
        "-c", str(ini), "--rootdir", str(exercise.checks_dir), "--confcutdir", str(exercise.checks_dir),
        "-p", "grader.judge.plugin", "-p", "no:cacheprovider", "-p", "no:randomly",
        "-q", "--no-header", "--tb=short", "-W", "ignore::DeprecationWarning",
        f"--hypothesis-seed={seed}",
        "--grader-submission", str(submission), "--grader-exercise", str(exercise.root),
        "--grader-sandbox", sandbox, "--grader-events", str(events), "--grader-id", grading_id,
    ]
    if gpus:
        argv += ["--grader-gpus", gpus]
    if image:
        argv += ["--grader-image", image]
    return argv


def run_checks(exercise: Exercise, submission: Path, *, sandbox: str, seed: int, grading_id: str,
               gpus: str | None = None, image: str | None = None) -> JudgeRun:
    with tempfile.TemporaryDirectory(prefix="grader-run-") as tmp:
        events, ini = Path(tmp) / "events.jsonl", Path(tmp) / "pytest.ini"
        ini.write_text("[pytest]\n")
        argv = pytest_argv(exercise, submission, sandbox=sandbox, seed=seed, events=events, ini=ini,
                           grading_id=grading_id, gpus=gpus, image=image)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
        env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
        log = Path(tmp) / "judge.log"
        run = JudgeRun()
        with open(log, "wb") as out:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    env=env, cwd=tmp, start_new_session=True, preexec_fn=_die_with_parent)
            try:
                proc.wait(timeout=exercise.limits.grading_timeout_s)
            except subprocess.TimeoutExpired:
                run.timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            except BaseException:  # Ctrl-C: take the judge and its sandbox down with us
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                _reap(sandbox, grading_id)
                raise
        if run.timed_out:
            _reap(sandbox, grading_id)
        _read_events(events, run)
        run.log_tail = log.read_text(errors="replace")[-3000:]
        return run


def _die_with_parent() -> None:
    """Linux: the judge gets SIGKILL when the grader dies (kill -9 included), so no judge outlives it.

    Its containers are then removed by the next grading's reaper (their owner
    process is gone) or, at the latest, by their own PID 1 deadline.
    """
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _read_events(path: Path, run: JudgeRun) -> None:
    if not path.exists():
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut off by a kill: the check it described has no outcome
        kind = event.pop("event", None)
        if kind == "collected":
            run.collected = event["checks"]
        elif kind == "result":
            result = CheckResult.model_validate(event)
            run.results[result.id] = result
        elif kind == "infra":
            run.infra = run.infra or event["reason"]
        elif kind == "sandbox":
            run.sandbox = event


def _reap(sandbox: str, grading_id: str) -> None:
    """Remove the containers of a judge we had to kill (it could not clean up after itself)."""
    if sandbox != "docker":
        return
    try:
        from grader.sandbox import docker_backend, engine

        docker_backend.reap(engine.connect(timeout=10), grading_id=grading_id)
    except Exception:
        pass  # the next grading's reaper removes them by owner pid
