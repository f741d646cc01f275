"""A corpus of hostile submissions, graded in real Docker, each with the outcome it must get.

Every one must score no more than the honest all-zero stub, leave no container
behind, and leave the grader able to grade the reference solution in full, under
both OCI runtimes: runc, and runsc (gVisor), which `sandbox/bootstrap.sh` registers.

Two walls stand in the way. Most of these files leave the toy's language subset
(``import os``, ``open``, ``sys._getframe``...): the judge refuses them before anything
runs, every check "not run" (``tests/test_audit.py`` holds the rules). The container is
the second wall, and must hold against code that found a way past the first: each refused
file is also run raw in the sandbox (staged without the subset's guard, called as the
checks call it), and its specific outcome (no network, not root, read-only files, the
deadline, the memory limit, a frame refused unread) is asserted there.
"""

import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch

from grader.exercise import load_exercise
from grader.host.grading import grade
from grader.reports.model import Status
from tests.conftest import tagged_containers, toy_with_deadlines

HOSTILE = Path(__file__).parent / "hostile"
TOY = Path(__file__).parent / "fixtures" / "toy"

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RUNTIMES = ["runc", "runsc"]

#: file -> statuses every check may end in, graded or run raw (anything else means the attack changed the outcome)
EXPECTED = {
    "exit_at_import.py": {Status.ERROR},
    "exit_at_call.py": {Status.ERROR},
    "patch_comparisons.py": {Status.FAILED, Status.ERROR},
    "tensor_subclass.py": {Status.FAILED, Status.ERROR},
    "always_equal.py": {Status.FAILED, Status.ERROR},
    "infinite_loop.py": {Status.TIMEOUT},
    "sleep.py": {Status.TIMEOUT},
    "memory_bomb.py": {Status.ERROR},
    "fork_bomb.py": {Status.TIMEOUT, Status.ERROR},
    "output_flood.py": {Status.FAILED, Status.ERROR, Status.TIMEOUT},
    "proc_fd_flood.py": {Status.FAILED, Status.ERROR},  # run raw: its writes go nowhere, or are its own failure
    "disk_fill.py": {Status.FAILED, Status.ERROR},
    "background_process.py": {Status.FAILED, Status.ERROR},
    "spy_hidden_files.py": {Status.FAILED, Status.ERROR},
    "spy_sandbox_facts.py": {Status.FAILED, Status.ERROR},
    "huge_frame.py": {Status.FAILED},  # run raw: the frame is refused from its header, the check fails by name
    "new_program.py": {Status.PASSED, Status.FAILED},  # run raw: it computes; no program it starts ever runs
}
#: Files that stay inside the toy's subset: graded, they run, and the report is what the sandbox did.
IN_THE_SUBSET = {"always_equal.py", "infinite_loop.py", "memory_bomb.py", "tensor_subclass.py"}


#: Files whose expected outcome is the call deadline itself keep the toy's 3 s. Every other file is graded
#: with the 20 s deadline real exercises have: what they prove (nothing found, nothing written, the memory
#: limit hit) must not turn into a timeout because a busy machine ran their walk or allocation slowly.
SHORT_DEADLINE = {"infinite_loop.py", "sleep.py", "fork_bomb.py"}


@pytest.fixture(scope="module")
def patient_toy(tmp_path_factory):
    """The toy exercise with a 20 s call deadline (and the grading deadline to match)."""
    return toy_with_deadlines(tmp_path_factory.mktemp("patient") / "toy", call_timeout_s=20, grading_timeout_s=300)


#: Every file under both runtimes. Under runsc each sandbox restart pays gVisor's slower torch import
#: (about 4.7 s instead of 1.4 s), which is why the suite runs on two xdist workers.
CASES = [(name, runtime) for runtime in RUNTIMES for name in sorted(EXPECTED)]


def test_corpus_is_complete():
    assert sorted(p.name for p in HOSTILE.glob("*.py")) == sorted(EXPECTED)


@pytest.fixture(scope="module")
def stub_score(docker_client):
    report = grade(TOY, None, sandbox="docker")
    assert report.graded
    return report.score


@dataclass
class Outcome:
    """What happened to a file's calls: the statuses, the candidate's output and the messages."""

    statuses: set = field(default_factory=set)
    output: str = ""
    messages: list = field(default_factory=list)


@pytest.mark.parametrize(("name", "runtime"), CASES)
def test_hostile_submission_gains_nothing(name, runtime, stub_score, patient_toy, tmp_path, no_leftover_containers):
    toy = TOY if name in SHORT_DEADLINE else patient_toy
    report = grade(toy, HOSTILE / name, sandbox="docker", runtime=runtime)
    assert report.graded, report.not_graded_reason
    assert report.score <= stub_score
    if name in IN_THE_SUBSET:
        assert report.violations == [] and report.environment.oci_runtime == runtime
        outcome = Outcome({c.status for c in report.checks}, "".join(c.output for c in report.checks),
                          [c.message for c in report.checks])
    else:  # the first wall: never run, every line that leaves the subset named
        assert report.violations and all(c.not_run for c in report.checks), report.violations
        outcome = _run_raw(load_exercise(toy), HOSTILE / name, runtime, tmp_path)
    assert outcome.statuses <= EXPECTED[name], outcome
    _specific(name, outcome)


def _run_raw(exercise, path: Path, runtime: str, workdir: Path) -> Outcome:
    """The file run in the sandbox as it is, without the subset's guard, its `scale` called as the toy's checks
    call it (a small tensor, a float64 vector, a non-finite factor); each call's outcome as a check's status."""
    from grader.backends.call_result import Failure
    from grader.backends.factory import open_sandbox

    sandbox, _ = open_sandbox("docker", exercise=exercise, submission=path, workdir=workdir,
                              grading_id=uuid.uuid4().hex[:12], runtime=runtime, guard=False)
    calls = [((torch.tensor([1.0, -2.0]), 3.0), torch.tensor([3.0, -6.0])),
             ((torch.arange(4, dtype=torch.float64), 2.0), torch.arange(4, dtype=torch.float64) * 2),
             ((torch.ones(2), float("nan")), None)]
    outcome = Outcome()
    try:
        for args, expected in calls:
            result = sandbox.call("scale", args)
            outcome.output += result.output
            if result.failure is Failure.TIMEOUT:
                status = Status.TIMEOUT
            elif result.failure is Failure.TOO_LARGE:
                status = Status.FAILED  # the plugin fails the check by name (ResultTooLarge)
            elif result.failure is not None or result.error is not None:
                status = Status.ERROR if expected is not None or result.failure is not None else Status.FAILED
            else:
                right = isinstance(result.value, torch.Tensor) and expected is not None and \
                    result.value.shape == expected.shape and bool(torch.equal(result.value, expected))
                status = Status.PASSED if right else Status.FAILED
            outcome.statuses.add(status)
            outcome.messages.append(result.failure_message or (result.error.message if result.error else ""))
    finally:
        sandbox.close()
    return outcome


def _specific(name, outcome: Outcome):
    if name == "spy_sandbox_facts.py":
        line = next(l for l in outcome.output.splitlines() if l.startswith("IFACES="))
        facts = dict(part.split("=") for part in line.split())
        assert facts["IFACES"] == "lo"  # no interface but loopback: no network
        assert facts["UID"] == "65534" and facts["GID"] == "65534"  # not root
        assert int(facts["CAPEFF"], 16) == int(facts["CAPPRM"], 16) == int(facts["CAPBND"], 16) == 0
    elif name == "spy_hidden_files.py":
        line = next(l for l in outcome.output.splitlines() if l.startswith("FOUND:"))
        assert line == "FOUND:", f"the sandbox can see: {line}"
    elif name == "output_flood.py":
        assert len(outcome.output) < 10_000 * 3  # capped in the sandbox, call by call
    elif name == "disk_fill.py":
        out = outcome.output
        # Read-only everywhere but /tmp: EROFS under runc; gVisor answers EACCES (PermissionError).
        assert re.search(r"/sandbox/submission/fill: (OSError|PermissionError)", out), out
        assert re.search(r"\n/fill: (OSError|PermissionError)", "\n" + out), out
    elif name in ("infinite_loop.py", "sleep.py"):
        # Each call ran past its deadline, or (on a busy machine, once the timed-out calls had taken the grading's
        # hang allowance) was not tried: how many of each depends on the load, that every one is one does not.
        ran = [m for m in outcome.messages if not m.startswith("not tried: ")]
        assert ran and all("deadline" in m for m in ran), outcome.messages
        assert all("allows them" in m for m in outcome.messages if m not in ran), outcome.messages
        # Which clock ended each call, charged to the sandbox: its CPU budget (or, on a machine that gave it under
        # an eighth of its share, the hard limit), or, asleep, the wall-clock ceiling.
        clocks = ("CPU-seconds (", "the hard limit of") if name == "infinite_loop.py" else ("the wall-clock ceiling of",)
        assert all(any(clock in m for clock in clocks) for m in ran), outcome.messages
    elif name == "proc_fd_flood.py":  # PID 1's descriptors refused (runc), or each write the call's own failure
        wrote = [l for l in outcome.output.splitlines() if l.startswith("WROTE=")]
        assert (wrote and all(l == "WROTE=" for l in wrote) and not any(outcome.messages)) or all(
            "protocol violation" in m for m in outcome.messages), (outcome.output, outcome.messages)
    elif name == "memory_bomb.py":
        assert any("memory" in m for m in outcome.messages), outcome.messages
    elif name == "new_program.py":  # no new program: every route to one is refused, in every call
        lines = [l for l in outcome.output.splitlines() if l.startswith("STARTED=")]
        assert lines and all(l == "STARTED=" for l in lines), lines
    elif name == "huge_frame.py":  # refused from the frame header: the call fails by name, no infra error
        assert any("sent a 240 MB result for a call; what one check may receive is limited to 16 MB" in m
                   for m in outcome.messages), outcome.messages


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_grader_still_grades_in_full_afterwards(runtime, docker_client, no_leftover_containers):
    report = grade(TOY, TOY / "solution.py", sandbox="docker", runtime=runtime)
    assert report.environment.oci_runtime == runtime
    assert report.graded and report.score == report.max_score > 0


def test_a_killed_grader_leaves_nothing_running_and_its_containers_are_reaped(docker_client, container_tag):
    """kill -9 the grader mid-grading: its judge dies with it, and the next grading reaps the container."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from grader.backends.docker_backend import reap
    from tests.proc import descendants, still_alive_after

    # infinite_loop.py stays inside the subset (sleep.py imports time, and would never reach a container).
    grader = subprocess.Popen([sys.executable, "-m", "grader", "submit", str(TOY), str(HOSTILE / "infinite_loop.py"),
                               "--exercise-root", str(TOY.parent)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    mine, started = set(), set()
    # Mid-grading: its container runs (started ahead of the judge: grader.backends.prestart) and so does its judge.
    while (not mine or len(started) < 2) and time.monotonic() < deadline:
        time.sleep(0.2)
        mine = tagged_containers(docker_client, container_tag)  # the grader inherits this test's GRADER_TAG
        started = descendants(grader.pid)  # the warm judge server and the judge forked from it
    assert mine, "the grading never started a container"
    assert len(started) >= 2, started
    os.kill(grader.pid, signal.SIGKILL)
    grader.wait()
    assert not still_alive_after(started), "a judge or the judge server outlived the grader"
    # The container may already be on its way out (its worker saw stdin close); the reaper
    # removes it if not. Either way it must be gone within seconds.
    deadline = time.monotonic() + 15
    while True:
        reap(docker_client)  # what every grading does first
        left = tagged_containers(docker_client, container_tag)
        if not (left & mine) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert not (left & mine)
