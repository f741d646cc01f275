"""The local sandbox on any laptop: missing OS pieces are simulated, and a real worker still answers.

macOS enforces no address-space limit; Windows has no ``resource`` module, no
fork, no ``killpg`` and no ``setsid``. Each is taken away here (in the judge-side
process) and the sandbox must start, answer a probe call and say which limits
are not in force, instead of crashing.
"""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader import processes
from grader.exercise import Limits
from grader.host.grading import grade
from grader.host import runner, warm
from grader.backends import local_backend
from grader.backends.call_result import Failure
from grader.backends.client import Sandbox
from grader.backends.factory import open_sandbox
from grader.backends.local_backend import local_starter, plan_rlimits, rlimits_for
from grader.backends.staging import stage
from grader.reports.warning import WarningCode

TOY = Path(__file__).parent / "fixtures" / "toy"
PROBE_KIT = Path(__file__).parent / "fixtures" / "probe_kit" / "probes.py"
ALL_LIMITS = {"RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE"}


@pytest.fixture
def open_toy(toy, tmp_path):
    """Open the toy exercise's local sandbox on its reference solution; closed after the test."""
    boxes = []

    def open_():
        box, info = open_sandbox("local", exercise=toy, submission=TOY / "solution.py",
                                 workdir=tmp_path / f"judge{len(boxes)}", grading_id="local-test")
        boxes.append(box)
        return box, info

    yield open_
    for box in boxes:
        box.close()


@pytest.fixture
def kit(tmp_path):
    """A local sandbox over the probe kit for a candidate source; records every worker it starts."""
    opened, workers = [], []

    def open_(source: str, limits: Limits, call_timeout_s: float = 5.0) -> Sandbox:
        sub = tmp_path / "cand.py"
        sub.write_text(textwrap.dedent(source))
        staged = stage(probes=PROBE_KIT, submission=sub, module_name="cand", dest=tmp_path / f"stage{len(opened)}")
        starter = local_starter(staged, [], limits)

        def start():
            workers.append(starter())
            return workers[-1]

        opened.append(Sandbox(start, call_timeout_s=call_timeout_s))
        return opened[-1]

    open_.workers = workers
    yield open_
    for box in opened:
        box.close()


def test_without_a_resource_module_every_limit_is_unavailable_and_the_sandbox_still_answers(toy, open_toy,
                                                                                             monkeypatch):
    monkeypatch.setitem(sys.modules, "resource", None)
    plan = plan_rlimits(toy.limits)
    assert plan.wanted == {} and set(plan.unavailable) == ALL_LIMITS
    assert all("no `resource` module" in why for why in plan.unavailable.values())

    box, info = open_toy()
    result = box.call("identity", [41])
    assert result.ok and result.value == 41
    assert info.limits_unavailable == plan.unavailable
    assert box.hello.rlimits_applied == [] and box.hello.rlimits_failed == {}


def test_a_limit_missing_from_the_resource_module_is_unavailable_by_name(monkeypatch):
    import resource

    monkeypatch.delattr(resource, "RLIMIT_FSIZE")
    plan = plan_rlimits(Limits())
    assert "RLIMIT_FSIZE" in plan.unavailable["RLIMIT_FSIZE"]
    assert set(plan.wanted) == ALL_LIMITS - {"RLIMIT_FSIZE"}


def test_on_macos_the_address_space_limit_is_unavailable_and_the_rest_still_apply(open_toy, monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    plan = plan_rlimits(Limits())
    assert plan.unavailable == {"RLIMIT_AS": "macOS does not enforce an address-space limit"}
    assert plan.wanted == {k: v for k, v in rlimits_for(Limits()).items() if k != "RLIMIT_AS"}

    box, info = open_toy()
    assert box.call("identity", ["hi"]).value == "hi"
    assert set(box.hello.rlimits_applied) == ALL_LIMITS - {"RLIMIT_AS"}
    assert set(info.limits_unavailable) == {"RLIMIT_AS"}


def test_without_fork_killpg_or_setsid_the_sandbox_answers_and_a_hang_dies_at_the_deadline(kit, monkeypatch):
    for name in ("fork", "killpg", "setsid"):
        monkeypatch.delattr(os, name, raising=False)
    assert "start_new_session" not in processes.group_popen_kwargs()

    box = kit("""
        import time
        def ok():
            return 1
        def hang():
            while True:
                time.sleep(0.05)
    """, Limits(), call_timeout_s=1.0)
    assert box.call("run", ["ok"]).value == 1
    hung = box.call("run", ["hang"])
    assert hung.failure is Failure.TIMEOUT
    # Killed and reaped, not left running: the lost worker is closed on a thread (grader.backends.booting),
    # and `hang` never ends by itself, so this wait returns only because the worker was killed.
    assert kit.workers[0].server.transport.proc.wait(timeout=60) is not None
    assert box.call("run", ["ok"]).value == 1 and box.starts == 2  # a fresh worker took over


def test_where_setsid_is_missing_a_new_process_group_is_asked_for_the_windows_way(monkeypatch):
    monkeypatch.delattr(os, "setsid", raising=False)
    monkeypatch.setattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200, raising=False)
    assert processes.group_popen_kwargs() == {"creationflags": 0x200}


def test_kill_group_without_killpg_kills_the_child_and_tolerates_a_dead_one(monkeypatch):
    monkeypatch.delattr(os, "killpg", raising=False)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    processes.kill_group(proc)
    assert proc.wait(timeout=30) != 0
    processes.kill_group(proc)  # already gone and reaped: no error


def test_without_fork_the_cold_judge_grades_the_toy_end_to_end(monkeypatch):
    for name in ("fork", "killpg", "setsid"):
        monkeypatch.delattr(os, name, raising=False)
    cold = []

    class Recording(runner._ColdJudge):
        def __init__(self, *args, **kwargs):
            cold.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(runner, "_ColdJudge", Recording)
    assert not warm.available()
    report = grade(TOY, TOY / "solution.py", sandbox="local")
    assert len(cold) == 1 and cold[0].proc.returncode is not None
    assert report.graded and report.score == report.max_score == 6


def test_without_killpg_a_cold_judge_is_still_killed(tmp_path, monkeypatch):
    for name in ("fork", "killpg", "setsid"):
        monkeypatch.delattr(os, name, raising=False)
    (tmp_path / "test_sleeps.py").write_text("import time\n\ndef test_sleeps():\n    time.sleep(120)\n")
    judge = runner._ColdJudge([str(tmp_path / "test_sleeps.py"), "-p", "no:cacheprovider"], str(tmp_path),
                              tmp_path / "judge.log")
    assert not judge.wait(0.5)
    judge.kill()
    assert judge.proc.returncode is not None


def test_a_limit_the_worker_cannot_apply_is_in_the_hello_and_the_sandbox_still_answers(open_toy, monkeypatch):
    wanted = dict(rlimits_for(Limits()), RLIMIT_NOFILE=(512, 256))  # soft above hard: the OS refuses
    monkeypatch.setattr(local_backend, "rlimits_for", lambda limits, **_: wanted)
    box, _ = open_toy()
    assert box.call("identity", [3]).value == 3
    assert set(box.hello.rlimits_failed) == {"RLIMIT_NOFILE"}
    assert "RLIMIT_AS" in box.hello.rlimits_applied


def test_a_refused_limit_becomes_a_report_warning_and_grading_still_works(tmp_path):
    ex = tmp_path / "toy"
    shutil.copytree(TOY, ex)
    toml = (ex / "exercise.toml").read_text()
    (ex / "exercise.toml").write_text(toml.replace("memory_mb = 512", "memory_mb = 512\nnofile = 1099511627776"))
    report = grade(ex, ex / "solution.py", sandbox="local")
    assert report.graded and report.score == report.max_score == 6
    warned = [w.message for w in report.warned(WarningCode.LOCAL_LIMIT)]
    assert warned[0].startswith("local sandbox: no open files limit here (RLIMIT_NOFILE:")
    assert len(warned) == 1 and warned[0].endswith("the wall-clock deadlines still apply")


def test_no_limit_warning_when_every_limit_is_in_force():
    assert local_backend.limit_warnings({}, {}) == []  # a refusal that is not text never gets this far:
    # the hello carrying it is rejected (tests/test_sandbox_selfreport.py)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux enforces RLIMIT_AS")
def test_the_memory_limit_is_enforced_and_fails_the_call_not_the_grader(kit):
    box = kit("""
        def grab(gib):
            return len(bytearray(gib * 2**30))  # lazily zeroed: cheap wherever no limit stops it
    """, Limits(memory_mb=512))  # address space: 4 x 512 MiB = 2 GiB
    assert box.call("run", ["grab", 0]).value == 0
    assert "RLIMIT_AS" in box.hello.rlimits_applied
    over = box.call("run", ["grab", 3])
    assert over.error is not None and over.error.type == "MemoryError"
    assert box.call("run", ["grab", 0]).value == 0 and len(kit.workers) == 1  # same worker, still fine
