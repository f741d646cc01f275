"""What does the language subset add to a grading? Run on demand.

Measured side by side in one run:
  check:   the judge's subset check (``grader.subset.audit.audit_exercise_file``) of every exercise's
           reference, torch already imported (the host imports it for any audit): the first check of
           each exercise (its forbidden names computed) and the median of repeats;
  guard:   what the sandbox's guard adds: the judge's lists (``guard_lists``), staging the loader, and
           loading the candidate's module through ``grader.sandbox.restricted`` instead of a plain import;
  grading: one whole ``grade()`` of the same exercise's reference (``--sandbox``, default local).
It prints per-exercise figures, then ``subset_s=`` (the worst first check plus the guard) next to
``grading_s=`` and a last line ``ratio=`` (subset / grading). Goal: subset_s under 0.3 s, together with the
dispatcher removal (measured by its own benchmark).

    .venv/bin/python bench/subset_overhead.py [--exercise attention] [--sandbox local] [--repeats 20]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exercise", default="attention", help="the exercise whose grading is timed")
    parser.add_argument("--sandbox", default="local", choices=("local", "docker"))
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()

    t0 = time.perf_counter()
    import torch  # noqa: F401  (the host imports it for any audit; timed apart)

    torch_s = time.perf_counter() - t0
    from grader.exercise import load_exercise
    from grader.subset.audit import audit_exercise_file
    from grader.subset.guard import guard_lists
    from grader.sandbox import restricted
    from grader.backends.staging import stage
    from grader.host.validation import all_exercise_names

    print(f"import torch: {torch_s:.2f} s (paid by any audit, before and after the subset)")
    first, steady = {}, {}
    for name in all_exercise_names():
        ex = load_exercise(name)
        source = (REPO / "solutions" / name / ex.config.exercise.submission).read_text()
        t0 = time.perf_counter()
        audit = audit_exercise_file(ex, source)
        first[name] = time.perf_counter() - t0
        assert not audit.violations and not audit.forbidden, (name, audit.violations)
        steady[name] = median_time(lambda: audit_exercise_file(ex, source), args.repeats)
        print(f"  {name:28s} first {first[name] * 1000:7.1f} ms   then {steady[name] * 1000:6.1f} ms")
    worst = max(first, key=first.get)

    ex = load_exercise(args.exercise)
    reference = REPO / "solutions" / ex.name / ex.config.exercise.submission
    with tempfile.TemporaryDirectory() as tmp:
        lists_s = median_time(lambda: guard_lists(ex), args.repeats)
        staged = stage(probes=ex.probes, submission=reference, module_name=ex.module_name, dest=Path(tmp) / "s",
                       shared=ex.shared, guard=guard_lists(ex))
        loader = staged.root / "subset" / f"{ex.module_name}.py"
        lists = guard_lists(ex)

        def guarded():
            restricted.load(ex.module_name, str(loader), lists)
            sys.modules.pop(ex.module_name, None)

        def plain():
            spec = importlib.util.spec_from_file_location(ex.module_name, staged.submission_dir / reference.name)
            spec.loader.exec_module(importlib.util.module_from_spec(spec))

        guarded_s, plain_s = median_time(guarded, args.repeats), median_time(plain, args.repeats)
    guard_s = lists_s + max(0.0, guarded_s - plain_s)
    print(f"guard: lists {lists_s * 1000:.1f} ms, module load {guarded_s * 1000:.1f} ms guarded vs "
          f"{plain_s * 1000:.1f} ms plain (per process that imports it)")

    from grader.host.grading import grade

    t0 = time.perf_counter()
    report = grade(ex, reference, sandbox=args.sandbox)
    grading_s = time.perf_counter() - t0
    assert report.graded and report.score == report.max_score, report.not_graded_reason
    subset_s = first[worst] + guard_s
    print(f"subset_s={subset_s:.3f} (worst first check: {worst} {first[worst] * 1000:.1f} ms; guard "
          f"{guard_s * 1000:.1f} ms)  grading_s={grading_s:.2f} ({args.exercise}, {args.sandbox} sandbox)")
    print(f"ratio={subset_s / grading_s:.4f}")


if __name__ == "__main__":
    main()
