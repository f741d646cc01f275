"""How much does grading in a Docker sandbox cost over an author's plain pytest run? Run on demand.

Times, side by side in one run and interleaved, several times each:
  sandboxed: `grader submit EXERCISE FILE --sandbox docker` (runtime image built)
  plain:     `pytest EXERCISE/checks -p grader.judge.plugin` against the same file, as an
             author runs it: the plugin's default, the same worker in a subprocess over a
             pipe (no container). The judge never runs candidate code in its own process,
             so this is the cheapest way the checks run: what Docker adds is the difference.
and prints medians and a last line `ratio=X.XX` (sandboxed / plain). Goal: <= 1.15 (issue 29).

With `--base REF`, a third column: the sandboxed command of the code at REF (`git archive`,
on `PYTHONPATH`, the same exercise files), interleaved with the other two, and a
`ratio_vs_base=` line (this tree's sandboxed / REF's).

    .venv/bin/python bench/submit_overhead.py [--runs 5] [--exercise attention] [--file PATH] [--base REF]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tree_at import tree_at  # bench/tree_at.py: the code at --base REF

REPO = Path(__file__).resolve().parent.parent


def timed(argv: list[str], env: dict | None = None, cwd: Path = REPO) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):  # pytest exits 1 when checks fail; that is still a timing
        sys.exit(f"command failed ({proc.returncode}): {' '.join(argv)}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--exercise", default="attention")
    parser.add_argument("--file", default=None, help="default: solutions/<exercise>/<submission>")
    parser.add_argument("--base", help="a git ref whose sandboxed command runs beside (its committed code)")
    args = parser.parse_args()

    from grader.exercise import load_exercise
    from grader.host.runner import pytest_argv

    ex = load_exercise(args.exercise)
    file = Path(args.file) if args.file else REPO / "solutions" / ex.name / ex.config.exercise.submission
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        sandboxed = [sys.executable, "-m", "grader", "submit", str(ex.root), str(file), "--sandbox", "docker",
                     "--json", str(report)]
        # The very pytest command a grading runs, with the author's default sandbox (local).
        asked = grading_request(ex, file.resolve(), sandbox="local", seed=ex.config.checks.seed, grading_id="bench",
                                events=Path(tmp) / "events.jsonl")
        plain = pytest_argv(ex, asked, Path(tmp))
        base = None
        if args.base:
            tree = tree_at(args.base, Path(tmp) / "base")
            # The same exercise files (this tree's catalog), named: the base's catalog is its own copy.
            argv = [sys.executable, "-P", "-m", "grader", "submit", ex.name, str(file), "--exercise-root",
                    str(ex.root.parent), *sandboxed[6:]]
            base = (argv, {**os.environ, "PYTHONPATH": str(tree)}, Path(tmp))
        timed(sandboxed), timed(plain)  # warm the page cache and the image
        times: dict[str, list[float]] = {"sandboxed": [], "plain": [], **({"base": []} if base else {})}
        for _ in range(args.runs):
            times["sandboxed"].append(timed(sandboxed))
            times["plain"].append(timed(plain))
            if base:
                times["base"].append(timed(*base))
        score = json.loads(report.read_text())
    for name, values in times.items():
        print(f"{name:10s} median {statistics.median(values):6.2f} s   runs: "
              + " ".join(f"{v:.2f}" for v in values))
    print(f"graded {score['score']:g}/{score['max_score']:g} on {score['environment']['sandbox']} "
          f"image {str(score['environment']['image_id'])[:19]}")
    with open("/proc/loadavg") as f:
        print("load average at the end", " ".join(f.read().split()[:3]))
    if base:
        print(f"ratio_vs_base={statistics.median(times['sandboxed']) / statistics.median(times['base']):.2f}  "
              f"(sandboxed here / sandboxed at {args.base})")
    print(f"ratio={statistics.median(times['sandboxed']) / statistics.median(times['plain']):.2f}")


if __name__ == "__main__":
    main()
