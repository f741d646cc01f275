"""Batch throughput: 40 attention submissions graded with --jobs 1 and --jobs 2, side by side.

    .venv/bin/python bench/batch_throughput.py [--n 40]

Prints submissions per minute for each, the speed-up (goal on a 2-core machine:
>= 1.7, and >= 20 per minute with --jobs 2), and the peak memory of the whole
batch (grader + judges by PSS, so pages shared with the warm judge server are
counted once, + every sandbox container's cgroup usage) divided by the jobs.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from itertools import cycle
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO / "solutions" / "attention"


def make_submissions(root: Path, n: int) -> None:
    files = [SOLUTIONS / "attention.py", *sorted((SOLUTIONS / "variants").glob("*.py")),
             *sorted((SOLUTIONS / "mutants").glob("*.py"))]
    for i, src in zip(range(n), cycle(files)):
        dest = root / f"cand{i:03d}" / "attention" / "attention.py"
        dest.parent.mkdir(parents=True)
        dest.write_bytes(src.read_bytes() + f"\n# candidate {i}\n".encode())  # distinct hashes


def tree_pss(root: int) -> int:
    """PSS (bytes) of ``root`` and all its descendants."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat[stat.rindex(")") + 2:].split()[1])
            except OSError:
                pass
    pids, frontier = {root}, {root}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - pids
        pids |= frontier
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def containers_memory() -> int:
    total = 0
    for pattern in ("/sys/fs/cgroup/memory/docker/*/memory.usage_in_bytes", "/sys/fs/cgroup/docker/*/memory.current",
                    "/sys/fs/cgroup/system.slice/docker-*.scope/memory.current"):
        for f in Path("/").glob(pattern.lstrip("/")):
            try:
                total += int(f.read_text())
            except (OSError, ValueError):
                pass
    return total


def run(subs: Path, out: Path, jobs: int) -> tuple[float, int]:
    argv = [sys.executable, "-m", "grader", "batch", str(subs), "--out", str(out), "--jobs", str(jobs)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak, stop = [0], threading.Event()

    def sample():
        while not stop.wait(0.25):
            peak[0] = max(peak[0], tree_pss(proc.pid) + containers_memory())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    seconds = time.perf_counter() - t0
    stop.set()
    sampler.join()
    if proc.returncode != 0:
        sys.exit(f"batch --jobs {jobs} failed ({proc.returncode}):\n{err[-2000:]}")
    return seconds, peak[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="grader-bench-") as tmp:
        subs = Path(tmp) / "subs"
        make_submissions(subs, args.n)
        results = {}
        for jobs in (1, 2):
            seconds, peak = run(subs, Path(tmp) / f"out{jobs}", jobs)
            results[jobs] = seconds
            print(f"--jobs {jobs}: {args.n} submissions in {seconds:6.1f} s = {args.n / seconds * 60:5.1f} per minute; "
                  f"peak memory {peak / 2**20:6.0f} MiB in all, {peak / jobs / 2**20:5.0f} MiB per concurrent grading")
            shutil.rmtree(Path(tmp) / f"out{jobs}")
        print(f"ratio={results[1] / results[2]:.2f}  (speed-up of --jobs 2 over --jobs 1; goal >= 1.7)")


if __name__ == "__main__":
    main()
