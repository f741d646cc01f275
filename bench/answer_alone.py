"""How fast are the judge's answers alone (issue 30.4, 30.6)? Run on demand.

Times, side by side in one run and interleaved, ``--runs`` times each, for one exercise:
  stub alone:     `grader submit EXERCISE` outside a workspace (the untouched stub, known by its bytes),
                  the whole command in a fresh process, the catalog's collection cached
  parse alone:    `grader submit EXERCISE broken.py`, a file that does not parse, likewise
  cold alone:     the same broken file with an empty data folder (the collection not cached yet:
                  what a candidate's very first command pays)
  stub in process: `grade()` of the stub, alone, inside this process (the judge's part, without Python's
                  start-up and the imports a command pays)
  stub sandboxed: the stub graded for real in the local sandbox (`grade(..., answer_alone=False)`,
                  what `grader validate` still does, and what every command did before)
and prints medians and a last line `ratio=X.XX` (stub sandboxed / stub alone).
Goals: stub alone < 1 s, parse alone < 3 s (issue 30).

    .venv/bin/python bench/answer_alone.py [--runs 5] [--exercise attention]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BROKEN = "def scaled_dot_product_attention(q, k, v, mask=None)\n    return q\n"


def timed_command(argv: list[str], cwd: Path, data: Path) -> float:
    env = dict(os.environ, GRADER_DATA_DIR=str(data), COLUMNS="100")
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0 or "not run" not in proc.stdout:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(argv)}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return elapsed


def timed_grade(exercise: str, *, alone: bool) -> float:
    from grader.host.grading import grade

    t0 = time.perf_counter()
    report = grade(exercise, None, sandbox="local", answer_alone=alone)
    elapsed = time.perf_counter() - t0
    if not report.graded:
        sys.exit(f"the grading was not graded: {report.not_graded_reason}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--exercise", default="attention")
    args = parser.parse_args()
    grader = [sys.executable, "-m", "grader", "submit", args.exercise]
    times: dict[str, list[float]] = {"stub alone": [], "parse alone": [], "cold alone": [], "stub in process": [],
                                     "stub sandboxed": []}
    with tempfile.TemporaryDirectory() as tmp:
        work, data = Path(tmp) / "work", Path(tmp) / "data"
        work.mkdir()
        (work / "broken.py").write_text(BROKEN)
        os.environ["GRADER_DATA_DIR"] = str(data)
        timed_command(grader + ["broken.py"], work, data)  # fills the cache, warms the page cache
        timed_grade(args.exercise, alone=False)  # warms the judge server
        for n in range(args.runs):
            times["stub alone"].append(timed_command(grader, work, data))
            times["parse alone"].append(timed_command(grader + ["broken.py"], work, data))
            times["cold alone"].append(timed_command(grader + ["broken.py"], work, Path(tmp) / f"cold-{n}"))
            times["stub in process"].append(timed_grade(args.exercise, alone=True))
            times["stub sandboxed"].append(timed_grade(args.exercise, alone=False))
    for name, values in times.items():
        print(f"{name:15s} median {statistics.median(values):6.2f} s   runs: " + " ".join(f"{v:.2f}" for v in values))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"ratio={statistics.median(times['stub sandboxed']) / statistics.median(times['stub alone']):.2f}")


if __name__ == "__main__":
    main()
