"""CPU seconds per grading, by part: what bounds throughput on a loaded machine (issue 29). Run on demand.

Wall-clock figures on a shared 2-core machine move with everyone else's load; CPU time
does not (much). This grades N attention submissions with ``grader batch --jobs 1`` and
reads, side by side in the same run, the CPU each part used:

  driver     the ``grader batch`` process itself (the subset check, reports, the store)
  server     the warm judge server (its imports: once per batch, shown per grading)
  judges     the judges forked from it (pytest, hypothesis, reference values, the protocol)
  containers every sandbox container of this batch (its cgroup's cpuacct: Python, torch, the calls)
  engine     dockerd and containerd, and the shims and runc they start (reaped by pid 1, so other
             orphans reaped there in the meantime are counted too: an upper bound)

The driver, server and judges are read from ``/proc`` (a judge's CPU reaches its server's
``cutime`` when the server reaps it); the containers from their cgroups, sampled until
each is gone. It prints each part per grading, their sum, and the ceiling that sum puts
on throughput with every core of this machine busy (``cores * 60 / sum`` per minute),
ending with ``ratio=`` (that ceiling over issue 29's goal of 50 per minute).

    .venv/bin/python bench/grading_cpu.py [--n 8]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from batch_throughput import make_submissions, while_sampling  # noqa: E402  (the same 40-file mix, cycled)

TICK = os.sysconf("SC_CLK_TCK")
TAG = f"bench-cpu-{os.getpid()}"
GOAL_PER_MINUTE = 50


def proc_cpu(pid: int) -> tuple[float, float]:
    """(own CPU seconds, reaped children's CPU seconds) of ``pid``; raises OSError once it is gone."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK, (int(fields[13]) + int(fields[14])) / TICK


def find_pid(suffix: bytes) -> int | None:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().split(b"\0")[0].endswith(suffix):
                    return int(entry.name)
            except OSError:
                pass
    return None


def children(pid: int) -> list[int]:
    try:
        return [int(c) for t in Path(f"/proc/{pid}/task").iterdir()
                for c in (t / "children").read_text().split()]
    except OSError:
        return []


def container_cpu(cid: str) -> float | None:
    for path in (f"/sys/fs/cgroup/cpu,cpuacct/docker/{cid}/cpuacct.usage", f"/sys/fs/cgroup/cpuacct/docker/{cid}/cpuacct.usage"):
        try:
            return int(Path(path).read_text()) / 1e9
        except (OSError, ValueError):
            pass
    try:  # cgroup v2
        for line in Path(f"/sys/fs/cgroup/system.slice/docker-{cid}.scope/cpu.stat").read_text().splitlines():
            if line.startswith("usage_usec"):
                return int(line.split()[1]) / 1e6
    except OSError:
        pass
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=8)
    args = ap.parse_args()
    import docker

    engine = docker.from_env()
    dockerd, containerd = find_pid(b"dockerd"), find_pid(b"containerd")
    with tempfile.TemporaryDirectory(prefix="grader-bench-cpu-") as tmp:
        subs = Path(tmp) / "subs"
        make_submissions(subs, args.n)
        daemons0 = sum(sum(proc_cpu(p)) for p in (dockerd, containerd) if p) + proc_cpu(1)[1]
        argv = [sys.executable, "-m", "grader", "batch", str(subs), "--output", str(Path(tmp) / "out"), "--jobs", "1"]
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, GRADER_TAG=TAG))
        last: dict[str, float] = {}  # the latest reading of each part, kept after its process is gone
        boxes: dict[str, float] = {}

        def sample() -> None:
            try:
                own, _ = proc_cpu(proc.pid)
                last["driver"] = own
            except OSError:
                return
            for child in children(proc.pid):
                try:
                    if b"grader.host.zygote" in Path(f"/proc/{child}/cmdline").read_bytes():
                        server_own, judges_reaped = proc_cpu(child)
                        live = sum(sum(proc_cpu(j)) for j in children(child))
                        last["server"], last["judges"] = server_own, judges_reaped + live
                except OSError:
                    pass
            try:
                ids = [c["Id"] for c in engine.api.containers(filters={"label": f"grader.tag={TAG}"})]
            except Exception:
                ids = []
            for cid in ids:
                used = container_cpu(cid)
                if used is not None:
                    boxes[cid] = max(boxes.get(cid, 0.0), used)

        err, ended = while_sampling(proc, sample, every_s=0.2)
        wall = ended - t0
        daemons = sum(sum(proc_cpu(p)) for p in (dockerd, containerd) if p) + proc_cpu(1)[1] - daemons0
    if proc.returncode != 0:
        sys.exit(f"batch failed ({proc.returncode}):\n{err[-2000:]}")
    n = args.n
    parts = {"driver": last.get("driver", 0.0), "server": last.get("server", 0.0), "judges": last.get("judges", 0.0),
             "containers": sum(boxes.values()), "engine": daemons}
    total = sum(parts.values())
    cores = os.cpu_count() or 1
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"{n} gradings (--jobs 1) in {wall:.1f} s wall, load average {load}; {len(boxes)} containers seen")
    for name, seconds in parts.items():
        print(f"  {name:10s} {seconds / n:5.2f} CPU-s per grading  ({seconds:6.1f} in all)")
    print(f"  {'sum':10s} {total / n:5.2f} CPU-s per grading: at most {cores * 60 * n / total:.1f} per minute "
          f"with all {cores} cores busy")
    print(f"ratio={cores * 60 * n / total / GOAL_PER_MINUTE:.2f}  (that ceiling over the goal of {GOAL_PER_MINUTE}/min)")


if __name__ == "__main__":
    main()
