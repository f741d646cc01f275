"""The sandbox's own clocks, read from outside it (issue 25 §6): cgroups for Docker, /proc for the local worker.

Fake /proc and /sys trees stand in for the kernel, so every layout (cgroup v1 with ``cpu,cpuacct`` or a
``cpuacct`` hierarchy of its own, v2 with or without pressure information, a judge that sees none of it)
is tested on any machine; one test reads the real /proc of a local worker's process tree.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.backends import accounting
from grader.backends.accounting import (CgroupMeter, NoMeter, RunDelays, SessionMeter, cgroup_meter, cgroup_mounts,
                                       container_cgroup_dirs, deadline_warnings, process_cgroups, session_meter)

CID = "a719e720dd08b70c1834068fc0e9c6c9a65940c96e76a367a492ca5f050cd34e"

#: This project's machines: cgroup v1, cgroupfs driver, cpu and cpuacct in hierarchies of their own, and an
#: empty cgroup2 hierarchy beside them (systemd's hybrid layout).
MOUNTINFO_V1_SPLIT = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
MOUNTINFO_V1_JOINED = "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
MOUNTINFO_V2 = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"

PROC_CGROUP_V1 = f"""\
4:memory:/docker/{CID}
2:cpuacct:/docker/{CID}
1:cpu:/docker/{CID}
0::/docker/{CID}
"""
PROC_CGROUP_V2_SYSTEMD = f"0::/system.slice/docker-{CID}.scope\n"


def test_mount_table_lines_become_cgroup_mounts():
    mounts = cgroup_mounts(MOUNTINFO_V1_SPLIT + MOUNTINFO_V1_JOINED + "50 1 0:9 / /a\\040b rw - cgroup cgroup rw,cpuacct\n")
    assert [(str(m.point), m.version, sorted(m.controllers)) for m in mounts] == [
        ("/sys/fs/cgroup/cpu", 1, ["cpu", "rw"]), ("/sys/fs/cgroup/cpuacct", 1, ["cpuacct", "rw"]),
        ("/sys/fs/cgroup/memory", 1, ["memory", "rw"]), ("/sys/fs/cgroup/unified", 2, []),
        ("/sys/fs/cgroup/cpu,cpuacct", 1, ["cpu", "cpuacct", "rw"]), ("/a b", 1, ["cpuacct", "rw"])]
    assert cgroup_mounts("garbage\n\n1 2 3\n") == []


def test_a_process_cgroup_file_maps_each_controller_and_the_v2_hierarchy():
    paths = process_cgroups(PROC_CGROUP_V1)
    assert paths["cpuacct"] == paths["cpu"] == paths[""] == f"/docker/{CID}"
    assert process_cgroups(PROC_CGROUP_V2_SYSTEMD) == {"": f"/system.slice/docker-{CID}.scope"}


def test_the_containers_folder_is_found_from_its_process_first_then_the_engines_usual_places():
    v1 = container_cgroup_dirs(cgroup_mounts(MOUNTINFO_V1_SPLIT), process_cgroups(PROC_CGROUP_V1), CID)
    assert v1[0] == (1, Path(f"/sys/fs/cgroup/cpuacct/docker/{CID}"))
    joined = container_cgroup_dirs(cgroup_mounts(MOUNTINFO_V1_JOINED), {}, CID)  # its process unreadable
    assert joined == [(1, Path(f"/sys/fs/cgroup/cpu,cpuacct/docker/{CID}")),
                      (1, Path(f"/sys/fs/cgroup/cpu,cpuacct/system.slice/docker-{CID}.scope"))]
    v2 = container_cgroup_dirs(cgroup_mounts(MOUNTINFO_V2), process_cgroups(PROC_CGROUP_V2_SYSTEMD), CID)
    assert v2[0] == (2, Path(f"/sys/fs/cgroup/system.slice/docker-{CID}.scope"))
    # A mount that shows only part of the hierarchy (a judge in a cgroup namespace) shows paths under its root.
    nested = cgroup_mounts("1 2 0:1 /docker /cg rw - cgroup cgroup rw,cpuacct\n")
    assert container_cgroup_dirs(nested, process_cgroups(PROC_CGROUP_V1), CID)[0] == (1, Path(f"/cg/{CID}"))
    assert container_cgroup_dirs(nested, {}, "x") == [(1, Path("/cg/x"))]  # /system.slice is not under /docker
    # A process that is not the container's (its pid reused): its cgroup, the host's root, is never read.
    reused = container_cgroup_dirs(cgroup_mounts(MOUNTINFO_V1_SPLIT), process_cgroups("2:cpuacct:/\n0::/\n"), CID)
    assert Path("/sys/fs/cgroup/cpuacct") not in [folder for _, folder in reused]
    assert reused[0] == (1, Path(f"/sys/fs/cgroup/cpuacct/docker/{CID}"))


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def _schedstat(run_ns: int, wait_ns: int) -> str:
    return f"{run_ns} {wait_ns} 12\n"


def test_a_v1_container_meter_reads_cpuacct_and_its_threads_run_delays(tmp_path):
    folder = f"sys/fs/cgroup/cpuacct/docker/{CID}"
    root = _tree(tmp_path, {
        "proc/self/mountinfo": MOUNTINFO_V1_SPLIT.replace("/sys/", f"{tmp_path}/sys/"),
        "proc/4242/cgroup": PROC_CGROUP_V1,
        f"{folder}/cpuacct.usage": "2500000000\n",
        f"{folder}/tasks": "4242\n4243\n",
        "proc/4242/schedstat": _schedstat(1, 1_000_000_000), "proc/4243/schedstat": _schedstat(1, 500_000_000),
    })
    meter = cgroup_meter(CID, 4242, cpu_rate=1.0, proc=root / "proc")
    assert isinstance(meter, CgroupMeter) and meter.unavailable is None and meter.waits_unavailable is None
    assert meter.sample() == (2.5, 1.0)  # the longest wait of one thread
    (root / folder / "tasks").write_text("4242\n")  # 4243 ended
    (root / folder / "cpuacct.usage").write_text("3000000000\n")
    (root / "proc/4242/schedstat").write_text(_schedstat(1, 1_200_000_000))
    assert meter.sample() == (3.0, 1.2)
    assert deadline_warnings(meter) == []


def test_a_v2_container_meter_prefers_pressure_information(tmp_path):
    folder = f"sys/fs/cgroup/system.slice/docker-{CID}.scope"
    root = _tree(tmp_path, {
        "proc/self/mountinfo": MOUNTINFO_V2.replace("/sys/", f"{tmp_path}/sys/"),
        f"{folder}/cpu.stat": "usage_usec 4000000\nuser_usec 3000000\nsystem_usec 1000000\n",
        f"{folder}/cpu.pressure": "some avg10=0.00 avg60=0.00 avg300=0.00 total=750000\n"
                                  "full avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",
    })
    meter = cgroup_meter(CID, None, cpu_rate=2.0, proc=root / "proc")  # no pid: found at the systemd place
    assert meter.sample() == (4.0, 0.75) and meter.cpu_rate == 2.0


def test_a_v2_container_meter_without_pressure_sums_its_threads_run_delays(tmp_path):
    folder = f"sys/fs/cgroup/docker/{CID}"
    root = _tree(tmp_path, {
        "proc/self/mountinfo": MOUNTINFO_V2.replace("/sys/", f"{tmp_path}/sys/"),
        f"{folder}/cpu.stat": "usage_usec 1000\n", f"{folder}/cgroup.threads": "7\n",
        "proc/7/schedstat": _schedstat(1, 2_000_000_000),
    })
    assert cgroup_meter(CID, None, cpu_rate=1.0, proc=root / "proc").sample() == (0.001, 2.0)


def test_a_judge_that_cannot_see_the_containers_threads_times_the_ceiling_by_the_wall_clock_and_says_so(tmp_path):
    folder = f"sys/fs/cgroup/cpuacct/docker/{CID}"
    root = _tree(tmp_path, {"proc/self/mountinfo": MOUNTINFO_V1_SPLIT.replace("/sys/", f"{tmp_path}/sys/"),
                            f"{folder}/cpuacct.usage": "10\n", f"{folder}/tasks": "99\n"})  # no /proc/99
    meter = cgroup_meter(CID, 99, cpu_rate=1.0, proc=root / "proc")
    assert meter.unavailable is None and "run delays" in meter.waits_unavailable
    assert meter.sample() == (1e-8, None)
    assert deadline_warnings(meter)[0].startswith("the wall-clock ceiling of each call counted the time the sandbox "
                                                  "waited for a CPU (the run delays")


@pytest.mark.parametrize("mountinfo, says", [
    (None, "mount table could not be read"),
    ("", "no cgroup mount with a cpuacct controller or cgroup2"),
    (MOUNTINFO_V1_SPLIT, "not in any cgroup the judge can read"),  # rootless, or the judge in a container
])
def test_a_container_whose_cpu_time_cannot_be_read_degrades_to_the_wall_clock_never_a_crash(tmp_path, mountinfo,
                                                                                            says):
    proc = tmp_path / "proc"
    if mountinfo is not None:
        _tree(tmp_path, {"proc/self/mountinfo": mountinfo.replace("/sys/", f"{tmp_path}/sys/")})
    meter = cgroup_meter(CID, 4242, cpu_rate=1.0, proc=proc)
    assert isinstance(meter, NoMeter) and says in meter.unavailable and meter.sample() == (None, None)
    assert deadline_warnings(meter) == [f"call deadlines were measured by the wall clock, not in the sandbox's CPU "
                                        f"time ({meter.unavailable}): a busy machine may have cut a slow call short"]


def test_run_delays_count_the_longest_wait_between_looks_so_many_threads_waiting_at_once_count_once(tmp_path):
    proc = tmp_path
    delays = RunDelays(proc)

    def wait(tid: int, seconds: float) -> None:
        (proc / str(tid)).mkdir(exist_ok=True)
        (proc / str(tid) / "schedstat").write_text(_schedstat(0, int(seconds * 1e9)))

    wait(1, 3.0)
    wait(2, 1.0)
    assert delays.total([1, 2]) == 3.0  # the first look: the longest so far
    for tid in range(3, 103):  # a hundred new threads, each waited a little
        wait(tid, 0.01)
    wait(1, 3.5)
    assert delays.total(list(range(1, 103))) == 3.5  # 0.5 s (thread 1), not 1.0 s (the hundred)
    (proc / "2" / "schedstat").unlink()  # thread 2 ended between the listing and the read
    assert delays.total([1, 2]) == 3.5
    wait(1, 0.25)  # id 1 reused by a new thread: all of its count is new
    assert delays.total([1]) == 3.75


def _stat(pid: int, session: int, utime: int, stime: int, cutime: int = 0, cstime: int = 0) -> str:
    # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
    return f"{pid} (py (x) y) S 1 {session} {session} 0 0 0 0 0 0 0 {utime} {stime} {cutime} {cstime} 20 0 1 0\n"


def test_a_local_workers_clocks_are_its_sessions_processes_children_included(tmp_path):
    """Threads are read at /proc/<tid>, which Linux serves for every thread though it lists only processes."""
    tick = os.sysconf("SC_CLK_TCK")
    root = _tree(tmp_path, {
        "self/stat": _stat(1, 1, 0, 0),
        "100/stat": _stat(100, 100, 2 * tick, tick, cutime=tick),  # the worker, a reaped child's time in cutime
        "100/task/100/stat": "", "100/task/100001/stat": "",  # its main thread and another one
        "100/schedstat": _schedstat(0, 250_000_000), "100001/schedstat": _schedstat(0, 100_000_000),
        "101/stat": _stat(101, 100, tick, 0),  # its child, still running
        "101/task/101/stat": "", "101/schedstat": _schedstat(0, 150_000_000),
        "102/stat": _stat(102, 7, 50 * tick, 0),  # another session: not the sandbox's
        "102/task/102/stat": "", "102/schedstat": _schedstat(0, 9_000_000_000),
    })
    meter = SessionMeter(100, cpu_rate=4.0, proc=root)
    assert meter.sample() == (5.0, 0.25)  # the longest wait of one of its threads
    (root / "101" / "stat").unlink()  # ended and not yet counted in its parent: the CPU seen stays
    assert meter.sample()[0] == 5.0


def test_a_platform_without_proc_times_local_calls_by_the_wall_clock(tmp_path):
    meter = session_meter(4242, cpu_rate=1.0, proc=tmp_path / "no-proc")
    assert isinstance(meter, NoMeter) and "no /proc" in meter.unavailable


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads a real /proc")
def test_the_local_meter_charges_a_busy_child_of_the_worker():
    """The real kernel: a session leader whose child busy-loops is charged the child's CPU."""
    code = "import os,time\nif os.fork()==0:\n    t=time.time()\n    while time.time()-t<30: pass\nelse:\n    time.sleep(30)\n"
    proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    try:
        meter = session_meter(proc.pid, cpu_rate=1.0)
        first, _ = meter.sample()
        for _ in range(600):  # until it has used 0.3 CPU-seconds, however loaded the machine is
            cpu, waited = meter.sample()
            if cpu - first >= 0.3:
                break
            time.sleep(0.05)
        assert cpu - first >= 0.3 and waited is not None and waited >= 0
    finally:
        os.killpg(proc.pid, 9)
        proc.wait()


def test_meters_never_raise_on_garbage(tmp_path):
    folder = tmp_path / "cg"
    folder.mkdir()
    (folder / "cpuacct.usage").write_text("not a number")
    (folder / "tasks").write_text("x\n")
    assert CgroupMeter(1, folder, cpu_rate=1.0, proc=tmp_path).sample() == (None, None)
    assert accounting.read_cpu_ns(2, folder) is None and accounting.read_pressure_us(folder) is None


def _thread_stat(tid: int, *, nice: int = 0, policy: int = 0) -> str:
    # pid (comm) state, then fields 4..52: nice is field 19, policy field 41
    fields = ["0"] * 50
    fields[16 - 1], fields[38 - 1] = str(nice), str(policy)
    return f"{tid} (spinner) R " + " ".join(fields[:-1]) + "\n"


def test_a_thread_the_sandbox_demoted_waits_on_its_own_time(tmp_path):
    """A SCHED_IDLE spinner (or a nicer nice) beside a hanging call waits for a CPU by its own choice: its waits are
    not the host's, so they never stretch the call's wall-clock ceiling."""
    folder = f"sys/fs/cgroup/cpuacct/docker/{CID}"
    root = _tree(tmp_path, {
        "proc/self/mountinfo": MOUNTINFO_V1_SPLIT.replace("/sys/", f"{tmp_path}/sys/"),
        "proc/4242/cgroup": PROC_CGROUP_V1, f"{folder}/cpuacct.usage": "1000000000\n",
        f"{folder}/tasks": "4242\n4243\n4244\n",
        "proc/4242/stat": _thread_stat(4242), "proc/4242/schedstat": _schedstat(1, 1_000_000_000),
        "proc/4243/stat": _thread_stat(4243, policy=accounting.SCHED_IDLE),
        "proc/4243/schedstat": _schedstat(1, 9_000_000_000),
        "proc/4244/stat": _thread_stat(4244, nice=19), "proc/4244/schedstat": _schedstat(1, 7_000_000_000),
    })
    meter = cgroup_meter(CID, 4242, cpu_rate=1.0, proc=root / "proc")
    assert meter.sample() == (1.0, 1.0)  # without the rule: 9.0, the spinner's wait
    (root / "proc/4243/stat").write_text(_thread_stat(4243, policy=accounting.SCHED_BATCH))
    (root / "proc/4243/schedstat").write_text(_schedstat(1, 20_000_000_000))
    assert meter.sample() == (1.0, 1.0)


def test_a_sandbox_started_nice_keeps_its_own_waits(tmp_path):
    """Demoted is relative to the sandbox's first process: a grader run under `nice` counts its waits as before."""
    root = _tree(tmp_path, {"4242/stat": _thread_stat(4242, nice=10), "4242/schedstat": _schedstat(1, 2_000_000_000),
                            "4243/stat": _thread_stat(4243, nice=15), "4243/schedstat": _schedstat(1, 8_000_000_000)})
    assert RunDelays(root, baseline_nice=accounting.nice_of(root, 4242)).total([4242, 4243]) == 2.0
    assert RunDelays(root).total([4242, 4243]) == 0.0  # from a nice-0 sandbox both are demoted


def test_pressure_gives_way_to_threads_once_a_thread_is_demoted(tmp_path):
    folder = f"sys/fs/cgroup/system.slice/docker-{CID}.scope"
    root = _tree(tmp_path, {
        "proc/self/mountinfo": MOUNTINFO_V2.replace("/sys/", f"{tmp_path}/sys/"),
        f"{folder}/cpu.stat": "usage_usec 4000000\n", f"{folder}/cgroup.threads": "7\n8\n",
        f"{folder}/cpu.pressure": "some avg10=0.00 avg60=0.00 avg300=0.00 total=500000\n",
        "proc/7/stat": _thread_stat(7), "proc/7/schedstat": _schedstat(1, 400_000_000),
        "proc/8/stat": _thread_stat(8), "proc/8/schedstat": _schedstat(1, 100_000_000),
    })
    meter = cgroup_meter(CID, None, cpu_rate=1.0, proc=root / "proc")
    assert meter.sample() == (4.0, 0.5)
    (root / "proc/8/stat").write_text(_thread_stat(8, policy=accounting.SCHED_IDLE))
    (root / folder / "cpu.pressure").write_text("some avg10=0.00 avg60=0.00 avg300=0.00 total=9500000\n")
    (root / "proc/8/schedstat").write_text(_schedstat(1, 9_100_000_000))  # the idle spinner's long wait
    assert meter.sample() == (4.0, 9.5)  # the switch: what pressure had counted, nothing new from the threads
    (root / "proc/7/schedstat").write_text(_schedstat(1, 700_000_000))
    (root / "proc/8/schedstat").write_text(_schedstat(1, 30_000_000_000))
    assert meter.sample() == (4.0, 9.8)  # thread 7's 0.3 s, not the spinner's


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SCHED_IDLE is Linux's")
def test_a_real_thread_set_to_sched_idle_reads_as_demoted():
    import threading

    found, go = {}, threading.Event()

    def spinner():
        found["tid"] = threading.get_native_id()
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        go.wait(30)

    t = threading.Thread(target=spinner)
    t.start()
    try:
        deadline = time.monotonic() + 30
        while not accounting.demoted(Path("/proc"), found.get("tid", 0), accounting.nice_of(Path("/proc"), os.getpid())):
            assert time.monotonic() < deadline, "the thread never read as demoted"
            time.sleep(0.01)
        assert not accounting.demoted(Path("/proc"), threading.get_native_id(),
                                      accounting.nice_of(Path("/proc"), os.getpid()))
    finally:
        go.set()
        t.join()
