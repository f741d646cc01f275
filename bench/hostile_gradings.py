"""How long does grading a hostile or broken file take? Run on demand (Docker sandbox).

Grades each file of a corpus with `grader submit --sandbox docker` and prints the
seconds each grading took, with its outcome:

  toy/*        every file of tests/hostile/ against the toy exercise, with the 20 s call
               deadline real exercises have (the toy's own is 3 s)
  attention/*  files made from the attention reference, each inside the language subset (no escape: a
               file outside it is answered without a sandbox): a loop in every call, each worker's
               first call slow (a long computation) then a loop in every call, a memory bomb, a hang
               at import, a syntax error (an unclosed "("), the untouched stub and the reference
               itself (honest gradings: they must not get slower)

With `--load N`, N busy processes run beside the gradings (three runnable tasks per core, as a batch
makes, is `--load 6` on two cores with one grading): the load average is printed at the start and end.

With `--base REF`, the same files are also graded by the code at REF (`git archive REF`
into a temporary folder, its own toy and attention exercises), interleaved with this
tree's gradings in one run, and the table shows seconds before/after side by side. The
last lines give the slowest grading after, and `ratio=` (total before / total after).
Goal (issue 14): no hostile or broken file over 60 s, honest gradings no slower.

    .venv/bin/python bench/hostile_gradings.py --base main [--only attention] [--runtime runsc]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tree_at import tree_at  # bench/tree_at.py: the code at --base REF

REPO = Path(__file__).resolve().parent.parent

#: Appended to the attention reference: every function the probes call does this first (inside the subset).
_EVERY_CALL = '''

_CALLS = {{"n": 0}}


def _hostile(fn):
    def wrapper(*args, **kwargs):
        _CALLS["n"] += 1
        {action}
        return fn(*args, **kwargs)
    return wrapper


scaled_dot_product_attention = _hostile(scaled_dot_product_attention)
MultiHeadAttention.__init__ = _hostile(MultiHeadAttention.__init__)
MultiHeadAttention.forward = _hostile(MultiHeadAttention.forward)
'''

ATTENTION_ACTIONS = {
    "infinite_loop": "while True: pass",
    "memory_bomb": "hoard = [bytearray(64 * 2**20) for _ in iter(int, 1)]",
    # Each worker's first call computes for a while (about 5 CPU-seconds) and answers; every later call loops.
    "slow_first_then_loop": "sum(range(150_000_000)) if _CALLS['n'] == 1 else any(iter(int, 1))",
}


@dataclass
class Case:
    name: str  # "toy/infinite_loop", "attention/reference"
    exercise: str  # "toy" or "attention": which exercise folder of the tree grades it
    file: Path


def corpus(workdir: Path) -> list[Case]:
    cases = [Case(f"toy/{p.stem}", "toy", p) for p in sorted((REPO / "tests" / "hostile").glob("*.py"))]
    reference = (REPO / "solutions" / "attention" / "attention.py").read_text()
    stub = (REPO / "exercises" / "attention" / "attention.py").read_text()
    sources = {name: reference + _EVERY_CALL.format(action=action) for name, action in ATTENTION_ACTIONS.items()}
    sources["import_hang"] = reference + "\nwhile True:\n    pass\n"
    sources["syntax_error"] = stub + '\nprint("unclosed"\n'
    sources["stub"] = stub
    sources["reference"] = reference
    for name, source in sources.items():
        folder = workdir / "attention" / name
        folder.mkdir(parents=True)
        (folder / "attention.py").write_text(source)
        cases.append(Case(f"attention/{name}", "attention", folder / "attention.py"))
    return cases


def exercises_of(tree: Path, dest: Path) -> dict[str, Path]:
    """The tree's attention exercise, and its toy exercise with a real exercise's 20 s call deadline."""
    toy = dest / "toy"
    shutil.copytree(tree / "tests" / "fixtures" / "toy", toy)
    toml = toy / "exercise.toml"
    text = re.sub(r"(?m)^call_timeout_s = .*$", "call_timeout_s = 20", toml.read_text())
    toml.write_text(re.sub(r"(?m)^grading_timeout_s = .*$", "grading_timeout_s = 300", text))
    return {"toy": toy, "attention": tree / "exercises" / "attention"}


def grade(tree: Path, exercise: Path, file: Path, runtime: str | None, scratch: Path) -> tuple[float, str]:
    """Seconds one `grader submit` of ``tree`` took, and the outcome in a few words."""
    report = scratch / "report.json"
    report.unlink(missing_ok=True)
    # By name from the folder holding it: an exercise is never taken from a path (issue 25.4).
    argv = [sys.executable, "-P", "-m", "grader", "submit", exercise.name, str(file), "--exercise-root",
            str(exercise.parent), "--sandbox", "docker",
            "--no-history", "--audience", "panel", "--json", str(report)]
    if runtime:
        argv += ["--runtime", runtime]
    env = {**os.environ, "PYTHONPATH": str(tree), "GRADER_DATA_DIR": str(scratch / "data")}
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=scratch, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if not report.exists():
        return elapsed, f"no report (exit {proc.returncode}): {(proc.stderr or proc.stdout).strip()[-200:]}"
    data = json.loads(report.read_text())
    if not data.get("graded", True):
        return elapsed, f"not graded: {str(data.get('not_graded_reason'))[:120]}"
    statuses: dict[str, int] = {}
    for check in data["checks"]:
        statuses[check["status"]] = statuses.get(check["status"], 0) + 1
    said = " ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
    return elapsed, f"{data['score']:g}/{data['max_score']:g} {said}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", help="a git ref to compare with (its committed code)")
    parser.add_argument("--only", help="grade only cases whose name contains this")
    parser.add_argument("--runtime", choices=["runc", "runsc"], help="OCI runtime (default: the grader's)")
    parser.add_argument("--load", type=int, default=0, help="busy processes beside the gradings")
    args = parser.parse_args()
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
    try:
        print(f"load average at the start: {os.getloadavg()} (with {args.load} busy processes beside)", flush=True)
        _run(args)
        print(f"load average at the end: {os.getloadavg()}")
    finally:
        for spinner in spinners:
            spinner.kill()


def _run(args) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
        tmp = Path(tmp)
        cases = [c for c in corpus(tmp / "files") if not args.only or args.only in c.name]
        trees = {"after": (REPO, exercises_of(REPO, tmp / "after"))}
        if args.base:
            base = tree_at(args.base, tmp / "base")
            trees = {"before": (base, exercises_of(base, tmp / "before")), **trees}
        scratch = tmp / "scratch"
        scratch.mkdir()
        print(f"{'grading':28s}" + "".join(f"{label:>9s}" for label in trees)
              + ("    ratio" if args.base else "") + "  outcome after (before, where it differs)", flush=True)
        rows = []
        for case in cases:
            row = {"name": case.name}
            for label, (tree, exercises) in trees.items():
                row[label] = grade(tree, exercises[case.exercise], case.file, args.runtime, scratch)
            rows.append(row)
            print(_line(row, trees), flush=True)
        _summary(rows, trees)


def _line(row: dict, trees: dict) -> str:
    line = f"{row['name']:28s}" + "".join(f"{row[label][0]:8.1f}s" for label in trees)
    if "before" not in trees:
        return line + f"  {row['after'][1]}"
    line += f"{row['before'][0] / row['after'][0]:9.2f}  {row['after'][1]}"
    return line + (f"  ({row['before'][1]})" if row["before"][1] != row["after"][1] else "")


def _summary(rows: list[dict], trees: dict) -> None:
    if not rows:
        sys.exit("no case matched --only")
    worst = max(rows, key=lambda r: r["after"][0])
    print(f"slowest after: {worst['name']} {worst['after'][0]:.1f} s (goal: at most 60 s)")
    if "before" in trees:
        before, after = sum(r["before"][0] for r in rows), sum(r["after"][0] for r in rows)
        print(f"total: before {before:.1f} s, after {after:.1f} s")
        print(f"ratio={before / after:.2f}")


if __name__ == "__main__":
    main()
