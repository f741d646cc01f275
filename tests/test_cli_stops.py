"""The two ways a user stops a command: the reader of its output goes away (`| head`), or Ctrl-C.

Neither is a failure of the grader: a closed pipe exits 141 (what a shell reports for any
tool it stops) and prints nothing; Ctrl-C exits 130 with one line, like `grader batch`.
Real processes, since both are about file descriptors and signals.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.errors import EXIT_CLOSED_PIPE, EXIT_INTERRUPTED
from grader.practice import history
from grader.reports.model import CheckResult, Environment, Report, Status, Visibility
from tests.conftest import toy_with_deadlines
from tests.proc import alive, descendants, sigint_as_a_terminal_gives_it, still_alive_after

REPO = Path(__file__).resolve().parent.parent
#: A submission whose every call sleeps past its deadline (20 s for the first call): the grading is surely
#: still running when Ctrl-C comes, however busy the machine.
#: Blocks for good without a `time` import (outside the language subset: it would never run).
SLOW = "import torch\n\n\ndef scale(x, factor):\n    torch.futures.Future().wait()  # never set: blocks, no CPU\n"


def grader_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "grader", *args]


def env() -> dict:
    return {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "80", "NO_COLOR": "1"}


def with_closed_stdout(*args: str) -> subprocess.CompletedProcess:
    """Run ``grader ARGS`` writing into a pipe whose reader is already gone: every write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(grader_argv(*args), stdout=write_end, stderr=subprocess.PIPE, text=True, env=env(),
                              cwd=REPO, timeout=300)
    finally:
        os.close(write_end)


def _attempt(name: str) -> None:
    check = CheckResult(id="test_a.py::test_a", name="a", status=Status.PASSED, score=1, max_score=1,
                        visibility=Visibility.HIDDEN)
    history.record(Report(exercise=name, graded=True, score=1, max_score=1, checks=[check],
                          environment=Environment(exercise_fingerprint="f", sandbox="local",
                                                  submission_sha256="0" * 64)))


@pytest.mark.parametrize("args", [("list",), ("history",), ("history", "attention"), ("--help",)])
def test_a_closed_pipe_is_no_failure_and_prints_no_traceback(args):
    _attempt("attention")
    done = with_closed_stdout(*args)
    assert done.returncode == EXIT_CLOSED_PIPE, done.stderr
    said = [line for line in done.stderr.splitlines() if not line.startswith("progress: ")]  # a long one says so
    assert said == [], done.stderr  # no traceback, no "Exception ignored", no "Aborted!"


def test_ctrl_c_in_submit_exits_130_with_one_line(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW)
    patient = toy_with_deadlines(tmp_path / "toy", call_timeout_s=20, grading_timeout_s=300)
    proc = subprocess.Popen(grader_argv("submit", str(patient), str(tmp_path / "slow.py"), "--exercise-root", str(tmp_path),
                                        "--sandbox", "local"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(), cwd=tmp_path,
                            start_new_session=True,  # its own group, signalled as a terminal signals its job
                            preexec_fn=sigint_as_a_terminal_gives_it)
    started: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while len(started) < 2 and time.monotonic() < deadline and proc.poll() is None:
            started = descendants(proc.pid)  # the judge, then the sandbox worker running the slow call
            time.sleep(0.2)
        assert proc.poll() is None and len(started) >= 2, "the grading ended or never started"
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=300)
        # The judge was killed mid-call; the worker in the candidate's sleep is in its own session,
        # out of the signal's reach: it must see its judge gone and end by itself.
        left = still_alive_after(started, seconds=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in still_alive_after(descendants(proc.pid) | started, seconds=0):
            os.kill(pid, signal.SIGKILL)  # ours: whatever the outcome, nothing of this test lives on
    assert left == set(), f"processes of the grading outlived it: {sorted(left)}"
    assert proc.returncode == EXIT_INTERRUPTED, err
    said = [line for line in err.strip().splitlines() if not line.startswith("progress: ")]  # every 10 s, piped
    assert said == ["interrupted: stopped before it finished; run the same command again."], err
    assert "Score" not in out
    assert history.attempts("toy") == []


#: A command added to the real CLI for the two tests below, run as ``python -m`` (where the first bug shows).
PROBE = """
import time
import weakref

from grader.cli import main


@main.command("string-exec")
def string_exec():
    exec("raise KeyboardInterrupt", {})  # as dataclasses builds methods: Ctrl-C landing in a string exec


@main.command("lost")
def lost():
    class Thing:
        pass

    thing = Thing()
    keep = weakref.ref(thing, lambda _: (_ for _ in ()).throw(KeyboardInterrupt))  # noqa: F841
    del thing  # the callback raises where Python cannot: "Exception ignored", the Ctrl-C dropped
    for _ in range(600):  # a minute of work that the Ctrl-C, delivered again, stops at once
        time.sleep(0.1)
    print("finished")


main()
"""


@pytest.mark.parametrize("command", ["string-exec", "lost"])
def test_ctrl_c_wherever_it_lands_exits_130_with_one_line(tmp_path, command):
    """Why the Ctrl-C test once saw -2 under load (docs/decisions/ctrl-c-exit-status.md): a Ctrl-C inside a string
    exec made ``python -m`` end by SIGINT after our exit(130); one in a weakref callback was dropped."""
    (tmp_path / "probe_cli.py").write_text(PROBE)
    done = subprocess.run([sys.executable, "-m", "probe_cli", command], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**env(), "PYTHONPATH": f"{REPO}:{tmp_path}"},
                          preexec_fn=sigint_as_a_terminal_gives_it)  # not ignored, as under a background shell
    assert done.returncode == EXIT_INTERRUPTED, (done.returncode, done.stderr)
    assert done.stderr == "interrupted: stopped before it finished; run the same command again.\n", done.stderr
    assert "finished" not in done.stdout


def test_a_local_worker_ends_when_the_process_that_started_it_is_killed(tmp_path):
    """A judge killed outright (SIGKILL: no cleanup) must not leave its local worker behind.

    The worker runs in its own session, out of reach of a signal to the judge's group, and
    here its input stays open (the test holds it), so only its watch on its parent can end it."""
    (tmp_path / "probes.py").write_text("")
    (tmp_path / "submission").mkdir()
    worker = [sys.executable, "-m", "grader.sandbox.worker_server", "--probes", str(tmp_path / "probes.py"),
              "--submission-dir", str(tmp_path / "submission")]
    starter = "import subprocess, sys, time; print(subprocess.Popen(sys.argv[1:]).pid, flush=True); time.sleep(600)"
    judge = subprocess.Popen([sys.executable, "-c", starter, *worker],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env(), cwd=tmp_path)
    worker_pid = int(judge.stdout.readline())
    try:
        assert judge.stdout.read(4) == b"GRDS"  # its first word: the server is up, watching the process that started it
        judge.kill()
        judge.wait()
        left = still_alive_after({worker_pid}, seconds=60)
    finally:
        for pid in alive({worker_pid}):
            os.kill(pid, signal.SIGKILL)
        judge.stdin.close()
    assert left == set(), "the worker server outlived the process that started it"
