"""What does the runtime subset cost a grading? The judge's rewrite (every attribute, item, call, iteration and
``with`` through a guard) against the module as written, side by side in one run. Run on demand.

For each exercise's reference it grades in the local sandbox, alternating, with the rewrite (a normal grading)
and without it (``GRADER_BENCH_UNGUARDED=1``: the sandbox compiles the module as written; only a benchmark
sets it, and its reports say so), ``--repeats`` times each. CPU is read from a cgroup this process creates and
joins first, so the judge server, every judge and every sandbox worker it starts are counted and nothing else on
the machine is: the figures hold on a busy machine. It prints per exercise the median CPU seconds of a grading
each way and their ratio, then the worst and the overall ``ratio=`` (CPU with / without). Goal: at most 1.1.
Needs root (to make a cgroup) and cgroup v1's cpuacct or cgroup v2.

    sudo .venv/bin/python bench/rewrite_overhead.py [--exercise NAME ...] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


class Cgroup:
    """A cgroup of this process's own (v1 cpuacct or v2): every process it starts from now on is in it."""

    def __init__(self, name: str):
        v1, v2 = Path("/sys/fs/cgroup/cpuacct"), Path("/sys/fs/cgroup")
        if (v1 / "cpuacct.usage").exists():
            self.folder, self.read = v1 / name, lambda: int((self.folder / "cpuacct.usage").read_text()) / 1e9
        elif (v2 / "cgroup.controllers").exists():
            self.folder = v2 / name
            self.read = lambda: int(next(line.split()[1] for line in (self.folder / "cpu.stat").read_text().splitlines()
                                         if line.startswith("usage_usec"))) / 1e6
        else:
            sys.exit("no cgroup v1 cpuacct or cgroup v2 to measure in")
        self.folder.mkdir(exist_ok=True)
        (self.folder / "cgroup.procs").write_text(str(os.getpid()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exercise", action="append", help="an exercise (default: every CPU exercise)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from grader.backends.staging import BENCH_UNGUARDED_ENV
    from grader.exercise import load_exercise
    from grader.host.grading import grade
    from grader.host.validation import all_exercise_names

    group = Cgroup(f"grader-bench-rewrite-{os.getpid()}")
    names = args.exercise or [n for n in all_exercise_names() if load_exercise(n).config.exercise.gpu != "required"]
    first = load_exercise(names[0])
    grade(first, REPO / "solutions" / first.name / first.config.exercise.submission, sandbox="local")  # the warm
    # judge server starts here (its imports are every grading's, not one mode's), then the measured runs
    print(f"load average at start: {os.getloadavg()}")
    totals = {"with": 0.0, "without": 0.0}
    worst = ("", 0.0)
    for name in names:
        ex = load_exercise(name)
        reference = REPO / "solutions" / name / ex.config.exercise.submission
        cpu: dict[str, list[float]] = {"with": [], "without": []}
        for _ in range(args.repeats):
            for mode in ("with", "without"):  # alternated, so a change in the machine's load touches both
                if mode == "without":
                    os.environ[BENCH_UNGUARDED_ENV] = "1"
                before = group.read()
                report = grade(ex, reference, sandbox="local")
                cpu[mode].append(group.read() - before)
                os.environ.pop(BENCH_UNGUARDED_ENV, None)
                assert report.graded and report.score == report.max_score, (name, mode, report.not_graded_reason)
        med = {mode: statistics.median(values) for mode, values in cpu.items()}
        ratio = med["with"] / med["without"]
        worst = max(worst, (name, ratio), key=lambda w: w[1])
        for mode in totals:
            totals[mode] += med[mode]
        print(f"  {name:28s} with {med['with']:6.2f} CPU-s   without {med['without']:6.2f} CPU-s   ratio {ratio:.3f}")
    print(f"load average at end: {os.getloadavg()}")
    print(f"worst={worst[0]} {worst[1]:.3f}")
    print(f"ratio={totals['with'] / totals['without']:.3f} (CPU of every reference's grading, with / without the "
          "rewrite; goal at most 1.1)")


if __name__ == "__main__":
    main()
