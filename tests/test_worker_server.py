"""The sandbox's worker server (grader.sandbox.worker_server, grader.backends.served): a fresh worker in
milliseconds inside the same sandbox, nothing of one worker in the next, and its failure modes.

Each case stages a raw candidate file (no runtime subset: what it does is what code that got past the judge
could do) under the probe kit, whose one probe calls a function of the file by name, in the local sandbox and,
where the container's own guarantees matter (PID 1, every process of the sandbox), in Docker.
"""

from __future__ import annotations

import os
import signal
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from grader.backends.call_result import Failure
from grader.backends.client import Sandbox
from grader.backends.local_backend import local_starter
from grader.backends.served import ServerLost
from grader.backends.staging import stage
from grader.exercise import Limits

PROBE_KIT = Path(__file__).parent / "fixtures" / "probe_kit" / "probes.py"

#: A candidate that lies about every way a worker can leave something behind or break its channel.
CANDIDATE = '''
import os, sys, time

def pid():
    return os.getpid()

def leave_behind():
    """Two children in sessions of their own, a file in the temporary folder: then hang."""
    for _ in range(2):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:  # and a grandchild, orphaned at once
                time.sleep(600)
            os._exit(0)
    with open(os.path.join(os.environ["TMPDIR"], "left.txt"), "w") as f:
        f.write("x")
    while True:
        time.sleep(0.05)

def listing():
    return sorted(os.listdir(os.environ["TMPDIR"]))

def half_a_frame():
    """Half a frame on the worker's own protocol channel, then the end."""
    for fd in range(3, 64):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:") and os.fstat(fd).st_mode & 0o200:
                os.write(fd, b"GRDR\\x00\\x00\\x10\\x00{\\"type\\": \\"res")
        except OSError:
            pass
    os._exit(3)

def kill_the_server():
    os.kill(os.getppid(), 9)
    time.sleep(30)

def hang():
    while True:
        pass
'''


@pytest.fixture
def box(tmp_path):
    opened = []

    def open_(call_timeout_s: float = 2.0) -> Sandbox:
        (tmp_path / "cand.py").write_text(textwrap.dedent(CANDIDATE))
        staged = stage(probes=PROBE_KIT, submission=tmp_path / "cand.py", module_name="cand",
                       dest=tmp_path / f"stage{len(opened)}")
        opened.append(Sandbox(local_starter(staged, [], Limits(memory_mb=2048)), call_timeout_s=call_timeout_s,
                              call_timeout_after_timeout_s=call_timeout_s))
        return opened[-1]

    yield open_
    for sandbox in opened:
        sandbox.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_hung_worker_is_replaced_by_a_fresh_one_in_the_same_server_and_leaves_nothing(box):
    sandbox = box()
    first = sandbox.call("run", ["pid"]).value
    server = sandbox._start_transport._server
    hung = sandbox.call("run", ["leave_behind"])
    assert hung.failure is Failure.TIMEOUT
    t0 = time.monotonic()
    second = sandbox.call("run", ["pid"])
    assert second.ok and second.value != first and sandbox.starts == 2
    assert sandbox._start_transport._server is server  # the same server forked it: no new sandbox
    assert time.monotonic() - t0 < 30  # a fork, not a start of Python and torch (generous: a busy machine)
    assert sandbox.call("run", ["listing"]).value == ["grader-output-" + str(second.value) + ".txt"]
    time.sleep(0.5)
    server_pid = server.transport.proc.pid
    leftovers = [int(p) for p in os.listdir("/proc") if p.isdigit() and _alive(int(p))
                 and Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[1] == str(server_pid)]
    assert leftovers == [second.value]  # the server's only child is the fresh worker: the orphans were ended


def test_a_worker_killed_mid_frame_loses_that_frame_and_says_so(box):
    sandbox = box()
    result = sandbox.call("run", ["half_a_frame"])
    assert result.failure is Failure.CRASH and result.value is None
    assert "in the middle of a frame" in result.failure_message or "exit code 3" in result.failure_message
    assert sandbox.call("run", ["pid"]).ok  # the channel is whole: the next worker answers


def test_the_server_itself_killed_is_not_graded_never_a_score(box):
    sandbox = box()
    assert sandbox.call("run", ["pid"]).ok
    server_pid = sandbox._start_transport._server.transport.proc.pid
    os.kill(server_pid, signal.SIGKILL)
    with pytest.raises(ServerLost):
        sandbox.call("run", ["pid"])


def test_the_server_found_dead_on_a_send_is_not_graded_either(box):
    """The same end, met when the next call is sent (the server already reaped, its channel closed) rather than
    while a reply is read: once read as that call's crash, a 0 for the check on a busy machine."""
    sandbox = box()
    assert sandbox.call("run", ["pid"]).ok
    server = sandbox._start_transport._server.transport.proc
    os.kill(server.pid, signal.SIGKILL)
    server.wait()
    with pytest.raises(ServerLost):
        sandbox.call("run", ["pid"])


def test_a_grading_that_hangs_on_every_call_spends_at_most_its_allowance(box):
    from grader.backends.deadlines import HANG_ALLOWANCE_S

    sandbox = box(call_timeout_s=3.0)
    sandbox._deadlines.allowance_left_s = sandbox._deadlines.allowance_s = 5.0  # the rule, at a test's scale
    results = [sandbox.call("run", ["hang"]) for _ in range(6)]
    assert all(r.failure is Failure.TIMEOUT for r in results)
    tried = [r for r in results if not r.failure_message.startswith("not tried")]
    assert 1 <= len(tried) < 6 and sum(r.duration_s for r in tried) <= 5.0 + 2.0
    assert results[-1].failure_message.startswith("not tried: this grading's calls that timed out had taken the 5 s")
    assert HANG_ALLOWANCE_S <= 25


@pytest.mark.docker
@pytest.mark.slow
def test_in_docker_the_server_is_pid_1_which_nothing_the_candidate_runs_can_signal(tmp_path, no_leftover_containers):
    from grader.backends.factory import open_sandbox
    from grader.exercise import load_exercise

    toy = load_exercise(Path(__file__).parent / "fixtures" / "toy")
    (tmp_path / "cand.py").write_text(textwrap.dedent('''
        import os, signal
        def scale(x, factor):
            refused = 0
            for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGSTOP):
                try:
                    os.kill(1, sig)
                except PermissionError:
                    refused += 1
            return x * factor * refused
    '''))
    sandbox, _ = open_sandbox("docker", exercise=toy, submission=tmp_path / "cand.py", workdir=tmp_path,
                              grading_id=uuid.uuid4().hex[:12], guard=False)
    try:
        import torch

        for _ in range(2):
            result = sandbox.call("scale", (torch.ones(2), 2.0))
            assert result.ok and result.value.tolist() == [8.0, 8.0], result.failure_message  # all four refused
        assert sandbox.starts == 1
    finally:
        sandbox.close()
