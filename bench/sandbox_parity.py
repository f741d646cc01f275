"""Does the local sandbox score the whole held-in corpus as Docker does? Run on demand.

For every exercise, grades each file `grader validate` grades (reference, stub,
variants, mutants) in Docker and in the local sandbox, interleaved, and compares
every check's status and points (`grader.reports.compare`). CI checks a sample
of this (`grader validate --parity`); this covers all of it. Prints one line
per exercise, every disagreement, and a last line with the time ratio
(local / docker), measured side by side in this run.

    .venv/bin/python bench/sandbox_parity.py [--exercise NAME ...] [--jobs 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader.exercise import load_exercise
from grader.host.grading import grade
from grader.reports.compare import outcome_differences
from grader.host.validation import all_exercise_names, corpus


def timed_grade(ex, path, sandbox):
    t0 = time.perf_counter()
    report = grade(ex, path, sandbox=sandbox, answer_alone=False)  # the stub too, in both sandboxes
    return report, time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exercise", action="append", help="default: every exercise")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    applied = Path(tempfile.mkdtemp(prefix="parity-mutants-"))
    totals = {"docker": 0.0, "local": 0.0}
    disagreements = files = 0
    for name in args.exercise or all_exercise_names():
        ex = load_exercise(name)
        if ex.config.exercise.gpu.value == "required":  # graded only with a GPU: not this comparison's
            print(f"{name}: skipped (needs a GPU)")
            continue
        paths = [item.gradable(applied / name) for item in corpus(ex)]  # a patched mutant: its applied source

        def both(path):
            docker, t_docker = timed_grade(ex, path, "docker")
            local, t_local = timed_grade(ex, path, "local")
            return path, outcome_differences(docker, local), t_docker, t_local

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            rows = list(pool.map(both, paths))
        bad = [(p, d) for p, d, _, _ in rows if d]
        files += len(rows)
        disagreements += len(bad)
        for key, i in (("docker", 2), ("local", 3)):
            totals[key] += sum(r[i] for r in rows)
        print(f"{name}: {len(rows)} files, {len(bad)} disagree")
        for path, diffs in bad:
            for d in diffs:
                print(f"  {path.name}: {d}")
    print(f"files={files} disagreements={disagreements} docker_s={totals['docker']:.1f} local_s={totals['local']:.1f}")
    print(f"ratio={totals['local'] / totals['docker']:.2f}  (local / docker grading time)")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
