"""The local sandbox's GPU plan: which memory limit applies, what is passed on to the worker, what the report says.

No GPU here: the capabilities CUDA would report are given by hand, and a real (CPU-torch) worker shows what
it was started with. That a CUDA worker starts and sees its device under this plan cannot run in this
repository's CI; ``scripts/gpu-smoke.sh --sandbox local`` proves it, and did on an H200 (docs/gpu.md, "What has and
has not run on a GPU").
"""

from __future__ import annotations

import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from grader.exercise import Limits
from grader.host.grading import grade
from grader.backends import gpu_probe, local_backend, memory_watch
from grader.backends.call_result import Failure
from grader.backends.client import Sandbox
from grader.backends.gpu import LocalGpuCapabilities, LocalGpuSetup
from grader.backends.local_backend import WATCHDOG, local_starter, plan_rlimits, worker_environment
from grader.backends.staging import stage
from grader.reports.warning import WarningCode
from grader.wire.grant import GpuRequest

TOY = Path(__file__).parent / "fixtures" / "toy"
PROBE_KIT = Path(__file__).parent / "fixtures" / "probe_kit" / "probes.py"
LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watchdog reads /proc")
SETUP = LocalGpuSetup(env={"CUDA_VISIBLE_DEVICES": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
                           "LD_LIBRARY_PATH": "/opt/nvidia/lib64"})


def test_a_gpu_grading_drops_the_address_space_limit_for_the_watchdog_and_keeps_the_rest():
    cpu, gpu = plan_rlimits(Limits(memory_mb=2048)), plan_rlimits(Limits(memory_mb=2048), gpu=True)
    assert "RLIMIT_AS" in cpu.wanted and cpu.watch_mb is None
    assert "RLIMIT_AS" not in gpu.wanted and "RLIMIT_AS" not in gpu.unavailable
    assert set(gpu.wanted) == set(cpu.wanted) - {"RLIMIT_AS"}  # CPU time, file size, open files: as before
    assert gpu.watch_mb == 2048


def test_without_proc_a_gpu_grading_says_it_has_no_memory_limit(monkeypatch):
    monkeypatch.setattr(memory_watch, "unavailable", lambda: "this platform has no /proc")
    plan = plan_rlimits(Limits(), gpu=True)
    assert plan.watch_mb is None and plan.unavailable == {WATCHDOG: "this platform has no /proc"}
    warning = local_backend.limit_warnings(plan.unavailable, {})
    assert [(w.code, w.message) for w in warning] == [
        (WarningCode.LOCAL_LIMIT, f"local sandbox: no memory limit here ({WATCHDOG}: this platform has no /proc); "
                                  "the wall-clock deadlines still apply")]


def test_a_gpu_worker_cannot_be_started_under_an_address_space_limit(tmp_path):
    staged = stage(probes=PROBE_KIT, submission=TOY / "solution.py", module_name="toy", dest=tmp_path / "s")
    with pytest.raises(ValueError, match="address-space limit"):
        local_starter(staged, [], Limits(), plan_rlimits(Limits()), gpu=SETUP)


def test_the_worker_gets_the_plans_environment_and_no_gpu_without_one(tmp_path, monkeypatch):
    monkeypatch.setenv("LD_LIBRARY_PATH", "/host/only")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    staged = stage(probes=PROBE_KIT, submission=TOY / "solution.py", module_name="toy", dest=tmp_path / "s")
    plain = worker_environment(str(tmp_path), staged, Limits(), None)
    assert plain["CUDA_VISIBLE_DEVICES"] == "" and "LD_LIBRARY_PATH" not in plain  # as Docker: no request, no GPU
    given = worker_environment(str(tmp_path), staged, Limits(), SETUP)
    assert {k: given[k] for k in SETUP.env} == SETUP.env


@pytest.fixture
def gpu_kit(tmp_path):
    """A local sandbox over the probe kit started as a GPU grading is (the watchdog instead of RLIMIT_AS)."""
    opened = []

    def open_(source: str, limits: Limits) -> Sandbox:
        sub = tmp_path / "cand.py"
        sub.write_text(textwrap.dedent(source))
        staged = stage(probes=PROBE_KIT, submission=sub, module_name="cand", dest=tmp_path / f"stage{len(opened)}")
        opened.append(Sandbox(local_starter(staged, [], limits, plan_rlimits(limits, gpu=True), gpu=SETUP),
                              call_timeout_s=60))
        return opened[-1]

    yield open_
    for box in opened:
        box.close()


@LINUX
def test_a_gpu_worker_starts_with_what_the_plan_passes_on_and_is_held_by_the_watchdog(gpu_kit):
    box = gpu_kit("""
        import os

        def env(name):
            return os.environ.get(name)

        def grab(mib):
            return len(b"x" * (mib * 2**20))  # touched: resident, as pinned host memory would be
    """, Limits(memory_mb=768))
    assert [box.call("run", ["env", k]).value for k in SETUP.env] == list(SETUP.env.values())
    assert "RLIMIT_AS" not in box.hello.rlimits_applied and "RLIMIT_CPU" in box.hello.rlimits_applied
    assert box.call("run", ["grab", 64]).value == 64 * 2**20  # well under the limit: untouched
    over = box.call("run", ["grab", 4096])  # an address-space limit would have raised MemoryError; this dies
    assert over.failure is Failure.CRASH
    assert "killed for exceeding its memory limit" in over.failure_message and "768 MB" in over.failure_message
    assert "memory watchdog" in over.failure_message


@LINUX
def test_the_watchdog_counts_what_the_worker_started_too(tmp_path):
    import subprocess

    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent("""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; b = b'x' * (300 * 2**20); time.sleep(60)"])
        time.sleep(60)
    """))
    parent = subprocess.Popen([sys.executable, str(script)], start_new_session=True)
    killed = []
    try:
        watch = memory_watch.MemoryWatch(parent.pid, 200 * 2**20, lambda: killed.append(parent.kill()),
                                         interval=0.05).start()
        parent.wait(timeout=60)
        watch.stop()
        assert killed and watch.tripped > 200 * 2**20 and "passed 200 MB" in watch.reason()
        assert len(memory_watch.descendants(parent.pid)) <= 2
    finally:
        import os
        import signal

        try:
            os.killpg(parent.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _optional_toy(tmp_path: Path) -> Path:
    root = tmp_path / "toy"
    shutil.copytree(TOY, root)
    toml = root / "exercise.toml"
    toml.write_text(toml.read_text().replace('[exercise]\n', '[exercise]\ngpu = "optional"\n', 1))
    return root


def test_a_cpu_torch_refuses_a_gpu_grading_before_it_starts(tmp_path, monkeypatch):
    """This machine, as it is: the local sandbox's torch is a CPU build, so --gpus is not graded, saying why."""
    caps = gpu_probe.local_capabilities()
    if caps.cuda_version is not None:
        pytest.skip("this machine's torch is a CUDA build")
    report = grade(_optional_toy(tmp_path), sandbox="local", gpus=GpuRequest(count=-1))
    assert not report.graded and report.checks == [] and report.score == 0
    assert "a CPU build: no GPU can reach it" in report.not_graded_reason
    assert report.environment.gpus == "all" and report.environment.local_gpu_env is None


def test_a_planned_gpu_the_worker_does_not_see_is_not_graded_and_the_report_says_what_was_passed_on(tmp_path,
                                                                                                   monkeypatch):
    """The whole path with a CUDA torch's capabilities given by hand: the plan reaches the judge, the judge's
    sandbox starts the worker with it, and the worker (a CPU torch) reports no GPU: not graded, never a skip."""
    monkeypatch.setattr(gpu_probe, "local_capabilities", lambda python=None: LocalGpuCapabilities(
        "2.11.0+cu130", "13.0", 1, None, "/opt/nvidia/lib64"))
    # The reference, not the stub: the untouched stub is answered by the judge alone, starting no worker.
    report = grade(_optional_toy(tmp_path), TOY.parent / "toy_solutions" / "toy" / "toy.py", sandbox="local", gpus=GpuRequest(count=1))
    assert report.environment.local_gpu_env == {"CUDA_VISIBLE_DEVICES": "0", "CUDA_CACHE_DISABLE": "1",
                                                "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "LD_LIBRARY_PATH": "/opt/nvidia/lib64"}
    said = [w.message for w in report.warned(WarningCode.LOCAL_GPU)]
    assert said[0].startswith("local sandbox with a GPU")
    assert len(said) == 1 and "RLIMIT_AS) is off" in said[0] and "CUDA_VISIBLE_DEVICES=0" in said[0]
    assert not report.graded and "A GPU was requested but the sandbox sees none" in report.not_graded_reason
    assert report.score == 0 and report.checks == []
