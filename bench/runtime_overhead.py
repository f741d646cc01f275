"""What does gVisor cost? Grades the same files under runc and runsc, interleaved. Run on demand.

For each file (the toy's reference, and one exercise's reference), grades it --runs
times under each OCI runtime, alternating, and prints medians and a last line
`ratio=X.XX` (runsc / runc wall time per grading). Needs runsc registered
(`bash sandbox/bootstrap.sh`).

    .venv/bin/python bench/runtime_overhead.py [--runs 3] [--exercise attention]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--exercise", default="attention")
    args = parser.parse_args()

    from grader.exercise import load_exercise
    from grader.host.grading import grade

    ex = load_exercise(args.exercise)
    cases = [("toy", REPO / "tests/fixtures/toy", REPO / "tests/fixtures/toy/solution.py"),
             (ex.name, ex, REPO / "solutions" / ex.name / ex.config.exercise.submission)]
    totals = {"runc": [], "runsc": []}
    for label, exercise, path in cases:
        times = {"runc": [], "runsc": []}
        grade(exercise, path, sandbox="docker", runtime="runc")  # warm the judge and the page cache
        for _ in range(args.runs):
            for runtime in ("runc", "runsc"):
                t0 = time.perf_counter()
                report = grade(exercise, path, sandbox="docker", runtime=runtime)
                times[runtime].append(time.perf_counter() - t0)
                if not report.graded or report.environment.oci_runtime != runtime:
                    sys.exit(f"{label} under {runtime}: not graded: {report.not_graded_reason}")
        for runtime in times:
            totals[runtime].append(statistics.median(times[runtime]))
        print(f"{label:>14}: runc {statistics.median(times['runc']):6.2f} s   runsc "
              f"{statistics.median(times['runsc']):6.2f} s   (median of {args.runs}, score "
              f"{report.score:g}/{report.max_score:g} under both)")
    print(f"ratio={sum(totals['runsc']) / sum(totals['runc']):.2f}  (runsc / runc, wall time per grading)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
