"""The sandbox pays for what it does (issue 25 §6), in a real engine: what it writes and what its calls take.

The deadline policy and the meters are tested as pure functions (tests/test_sandbox_restarts.py,
tests/test_accounting.py); here only what needs a container: that its output costs the host nothing,
and that a call's deadline is its cgroup's CPU time, end to end. Neither asserts on how long anything
took: which clock ended a call is part of the result.
"""

import time
import uuid
from pathlib import Path

import pytest
import torch

from grader.wire import protocol
from grader.exercise import load_exercise
from grader.build import naming
from grader.backends.call_result import Failure
from grader.backends.deadlines import Clock
from grader.backends.docker_backend import STRAY_CAP, container_kwargs, docker_starter
from grader.backends.staging import stage

TOY = Path(__file__).parent / "fixtures" / "toy"


@pytest.mark.docker
def test_writes_past_the_captured_output_leave_no_log_on_the_host_and_the_judge_caps_them(docker_client, tmp_path,
                                                                                           container_tag):
    """The attack: the worker points fds 1 and 2 at its capture file, but PID 1's stderr is the container's
    own, and writing to /proc/1/fd/2 put 856 MiB of JSON log on the host in 8 s, on the engine's CPU.
    Now the engine keeps nothing; PID 1, the worker server, keeps no stderr of its own and lets no process of
    its user open its file descriptors; and bytes that reach the container's stderr anyway come to the judge,
    which drops them and ends the sandbox past STRAY_CAP."""
    ex = load_exercise(TOY)
    staged = stage(probes=ex.probes, submission=ex.stub, module_name=ex.module_name, dest=tmp_path / "stage")
    kwargs = container_kwargs(image=naming.runtime_image_name(), staged=staged, forbidden=[], limits=ex.limits,
                              grading_id=f"charges-{uuid.uuid4().hex[:8]}")
    served = docker_starter(docker_client, kwargs)()
    transport = served.server.transport
    try:
        assert protocol.read_frame(lambda n: served.read(n, time.monotonic() + 120))["type"] == "hello"
        # As the candidate's code would: the sandbox's user, PID 1's stderr and its channel, 32 MB each.
        done = transport.container.exec_run(["sh", "-c", "for fd in 1 2 3 4 5; do head -c 33554432 /dev/zero > "
                                                   "/proc/1/fd/$fd && echo WROTE $fd; done"], user="65534:65534")
        assert b"WROTE" not in done.output, done.output
        served.send(protocol.encode({"type": "call", "id": 1, "probe": "identity", "args": [7]}))
        reply = {"type": "importing"}
        while reply["type"] in ("importing", "imported"):
            reply = protocol.read_frame(lambda n: served.read(n, time.monotonic() + 60))
        assert reply["type"] == "result" and reply["id"] == 1  # the channel is whole: the worker still answers
        assert transport.stray_bytes == 0
        attrs = docker_client.api.inspect_container(transport.container.id)
        assert attrs["HostConfig"]["LogConfig"]["Type"] == "none"
        assert attrs["LogPath"] == ""  # no log file: json-file's would be /var/lib/docker/containers/<id>/<id>-json.log
        folder = Path(docker_client.info()["DockerRootDir"]) / "containers" / transport.container.id
        if folder.is_dir():  # readable when the tests run as root
            assert not list(folder.glob("*-json.log")), sorted(p.name for p in folder.iterdir())
    finally:
        transport.close()


#: Six busy processes in the toy's limits (1 CPU, 128 pids); a sleep when the factor is 2; else an answer.
BUSY_FORKS = '''
import multiprocessing
import time


def _burn():
    while True:
        pass


def scale(x, factor):
    if factor == 2.0:
        time.sleep(3600)
    if factor == 3.0:
        return x * 3.0
    procs = [multiprocessing.get_context("fork").Process(target=_burn, daemon=True) for _ in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
'''


@pytest.mark.docker
def test_a_calls_deadline_is_its_cgroups_cpu_time_and_a_sleeping_call_meets_the_wall_clock_ceiling(
        docker_client, tmp_path, container_tag, no_leftover_containers):
    """Forks inside the container's own limits spend its CPU budget: the call ends by the CPU clock (the forks
    wait for the quota, so the wall-clock ceiling, which does not count waiting, cannot come first). On a
    machine so loaded that the sandbox gets under an eighth of its CPU share, the hard limit ends it instead;
    never the ceiling. A call that sleeps spends no CPU and ends at the ceiling."""
    from grader.backends.factory import open_sandbox

    ex = load_exercise(TOY)
    submission = tmp_path / "toy.py"
    submission.write_text(BUSY_FORKS)
    # guard=False: the raw file, as if it got past the judge's subset; the container's charges are the wall.
    box, _ = open_sandbox("docker", exercise=ex, submission=submission, workdir=tmp_path / "work",
                          grading_id=f"charges-{uuid.uuid4().hex[:8]}", guard=False)
    try:
        first = box.call("scale", [torch.ones(2), 3.0])
        assert first.value is not None and first.value.tolist() == [3.0, 3.0], (first.failure, first.failure_message)
        busy = box.call("scale", [torch.ones(2), 1.0])
        assert busy.failure is Failure.TIMEOUT and busy.timed_out_by is not Clock.WALL, busy.failure_message
        if busy.timed_out_by is Clock.CPU:  # the machine gave the sandbox more than an eighth of its share
            assert busy.failure_message.startswith("a call ran past its 3 s deadline: it used 3.0 of "
                                                   "its 3 CPU-seconds (")
        else:  # a machine so busy that the hard limit (8x) came first: starved, never cut by the ceiling
            assert busy.timed_out_by is Clock.HARD and "the hard limit of 24 s by the clock" in busy.failure_message
        asleep = box.call("scale", [torch.ones(2), 2.0])
        # After a timeout: the floor (1 s) and the grading's grace (a fifth of 3 s); the ceiling 10% above.
        assert asleep.timed_out_by is Clock.WALL and asleep.deadline_s == 1.6, asleep.failure_message
        assert "the wall-clock ceiling of 1.76 s passed with 0.0 CPU-seconds used" in asleep.failure_message
        assert box.deadline_warnings == []  # the cgroup and the threads' run delays were read
    finally:
        box.close()


def test_a_local_worker_is_charged_for_its_childrens_cpu(tmp_path):
    """The local sandbox's deadlines are its worker's session's CPU time, its children included (Linux /proc):
    busy children end the call on the CPU budget, never the wall-clock ceiling, however loaded the machine."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc: the local sandbox's deadlines are the wall clock's here (tested with a fake /proc)")
    from grader.exercise import Limits
    from grader.backends.client import Sandbox
    from grader.backends.local_backend import local_starter

    submission = tmp_path / "cand.py"
    submission.write_text(BUSY_FORKS.replace("def scale(x, factor):", "def scale(x=None, factor=1.0):"))
    staged = stage(probes=Path(__file__).parent / "fixtures" / "probe_kit" / "probes.py", submission=submission,
                   module_name="cand", dest=tmp_path / "stage")
    box = Sandbox(local_starter(staged, [], Limits(memory_mb=1024)), call_timeout_s=2.0, spares=0)
    try:
        busy = box.call("run", ["scale"])
        assert busy.failure is Failure.TIMEOUT and busy.timed_out_by is not Clock.WALL, busy.failure_message
        if busy.timed_out_by is Clock.CPU:
            assert "it used 2.0 of its 2 CPU-seconds" in busy.failure_message
        assert box.deadline_warnings == []
    finally:
        box.close()


def test_a_sandbox_whose_clocks_could_not_be_read_says_so_on_the_report():
    from grader.exercise import load_exercise
    from grader.host.fill import fill as _fill
    from grader.subset.audit import SourceAudit
    from grader.host.runner import JudgeRun
    from grader.reports.model import Environment, Report
    from grader.reports.warning import WarningCode
    from grader.backends.accounting import NoMeter, deadline_warnings
    from grader.wire.selfreport import SandboxSummary

    said = deadline_warnings(NoMeter("the container's CPU accounting was not found (a rootless engine)"))
    run = JudgeRun(infra="the engine went away", sandbox=SandboxSummary(sandbox="docker", deadline_warnings=said))
    report = Report(exercise="toy", graded=True, environment=Environment(sandbox="docker"))
    report = _fill(report, load_exercise(TOY), run, SourceAudit())
    assert [w.message for w in report.warned(WarningCode.WALL_CLOCK_DEADLINE)] == said
    assert said[0].startswith("call deadlines were measured by the wall clock")
