"""What making the forbidden APIs absent costs a sandbox's start. Run on demand.

For each exercise with a forbidden list (or those named), side by side in one run:
  removal:  ``grader.sandbox.removal.install`` alone, timed inside a fresh Python that has
            just imported torch, as the worker does before it greets (median of --runs);
  start:    a local sandbox's whole start, from launching the worker to its hello (the same
            worker Docker runs), with the exercise's forbidden list, and with none, interleaved;
  judge:    the judge's source check of the exercise's reference (``grader.subset.audit``;
            the language-subset check replaces it), which runs before the sandbox starts.
Prints one row per exercise and a last line ``ratio=X.XX``: the slowest exercise's
(removal + judge check) over 0.3 s. Goal: <= 1 (issue 25: under 0.3 s together).

    .venv/bin/python bench/removal_overhead.py [--runs 5] [EXERCISE ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOAL_S = 0.3

_INSTALL = """
import json, sys, time
import torch
from grader.sandbox import removal
plan = json.loads(sys.argv[1])
t0 = time.perf_counter()
done = removal.install(plan["apis"], plan["kernels"], candidate_dirs=[plan["dir"]])
print(json.dumps({"s": time.perf_counter() - t0, "operators": done.operators}))
"""


def removal_alone(apis: list[str], kernels: dict, folder: str) -> tuple[float, int]:
    plan = json.dumps({"apis": apis, "kernels": kernels, "dir": folder})
    out = subprocess.run([sys.executable, "-c", _INSTALL, plan], cwd=REPO, capture_output=True, text=True,
                         check=True)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return data["s"], data["operators"]


def sandbox_start(ex, forbidden: list[str], kernels: dict, tmp: Path, n: int) -> float:
    from grader.backends.client import Sandbox
    from grader.backends.local_backend import local_starter
    from grader.backends.staging import stage

    staged = stage(probes=ex.probes, submission=ex.stub, module_name=ex.module_name, dest=tmp / f"stage{n}",
                   shared=ex.shared)
    box = Sandbox(local_starter(staged, forbidden, ex.limits, kernels=kernels), call_timeout_s=60.0, spares=0)
    t0 = time.perf_counter()
    try:
        box.ensure_started()
        return time.perf_counter() - t0
    finally:
        box.close()


def judge_check(ex) -> float:
    from grader.subset.audit import audit_source

    source = (REPO / "solutions" / ex.name / ex.config.exercise.submission).read_text()
    t0 = time.perf_counter()
    audit_source(source, ex.config.forbidden, filename=ex.config.exercise.submission)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("exercises", nargs="*")
    args = parser.parse_args()

    from grader.exercise import known_names, load_exercise

    names = args.exercises or [n for n in known_names() if load_exercise(n).config.forbidden.apis]
    print(f"{'exercise':26s} {'ops':>4s} {'removal':>8s} {'judge':>7s} {'start+':>8s} {'start-':>8s}  (median s)")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            ex = load_exercise(name)
            apis, kernels = ex.config.forbidden.apis, ex.config.forbidden.kernels
            removal, with_list, without = [], [], []
            operators = 0
            for i in range(args.runs):
                seconds, operators = removal_alone(apis, kernels, tmp)
                removal.append(seconds)
                with_list.append(sandbox_start(ex, apis, kernels, Path(tmp), 2 * i))
                without.append(sandbox_start(ex, [], {}, Path(tmp), 2 * i + 1))
            judge_check(ex)  # the judge has torch imported already when it checks a file: not counted
            judge = statistics.median(judge_check(ex) for _ in range(args.runs))
            r, s_with, s_without = (statistics.median(v) for v in (removal, with_list, without))
            worst = max(worst, r + judge)
            print(f"{name:26s} {operators:4d} {r:8.3f} {judge:7.3f} {s_with:8.2f} {s_without:8.2f}")
    print("removal: install() alone; judge: the source check of the reference; start+/-: a local sandbox's "
          "start to its hello with / without the forbidden list")
    print(f"ratio={worst / GOAL_S:.2f}")


if __name__ == "__main__":
    main()
