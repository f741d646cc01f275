"""How long does the batch's similarity pass take, before and after winnowing? Run on demand.

Side by side in one run, on the same inputs:
  old: the difflib pass grader used before (a bit-parallel LCS bound then ``ratio()``, stub removed
       with difflib's matching blocks), kept here and only here for the comparison;
  new: ``grader.batch.similarity.similar_pairs`` (winnowed fingerprints, linear per file).
Two workloads: two identical legal Python files of 1 MB (the submission size cap), and N typical
submissions to one exercise (the exercise's reference, variants and mutants, each handed in by
several candidates with a comment of their own). The old pass runs in a child process killed at
``--cap`` seconds; a capped time is printed as ``>cap`` and its ratio is a lower bound.
Then the cost of comparing every submission with its exercise's published answers too (issue 25:
reference, variants and mutants, ``compare(..., published=...)``), side by side with the pass without
them, on the typical workload and on one 1 MB file. The last line is ``ratio=X`` (old / new on the 1 MB pair).

    .venv/bin/python bench/similarity.py [--n 100] [--cap 120] [--exercise attention]
"""

from __future__ import annotations

import argparse
import difflib
import multiprocessing
import sys
import time
from collections import defaultdict
from itertools import groupby
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grader.batch.published import published_files, solution_folders  # noqa: E402
from grader.batch.similarity import Pair, Submission, compare, normalise, similar_pairs  # noqa: E402
from grader.corpus import corpus  # noqa: E402
from grader.exercise import load_exercise  # noqa: E402
from grader.host.grading import MAX_SUBMISSION_BYTES  # noqa: E402


def old_distinctive(tokens: list[str], stub_tokens: list[str], min_block: int = 8) -> list[str]:
    if not stub_tokens:
        return list(tokens)
    keep = [True] * len(tokens)
    for i, _, size in difflib.SequenceMatcher(None, tokens, stub_tokens, autojunk=False).get_matching_blocks():
        if size >= min_block:
            keep[i:i + size] = [False] * size
    return [t for t, k in zip(tokens, keep) if k]


def old_lcs_ratio(a: list[str], b_positions: dict[str, int], b_len: int) -> float:
    total = len(a) + b_len
    if not total:
        return 1.0
    full = v = (1 << b_len) - 1
    for t in a:
        u = v & b_positions.get(t, 0)
        v = ((v + u) | (v - u)) & full
    return 2.0 * (b_len - v.bit_count()) / total


def old_similar_pairs(submissions, stubs, *, threshold=0.9, min_tokens=30) -> list[Pair]:
    """The pass as it was before winnowing (grader/batch/similarity.py at the start of issue 13)."""
    stub_tokens = {name: normalise(text) for name, text in stubs.items()}
    pairs = []
    ordered = sorted(submissions, key=lambda s: (s.exercise, s.candidate))
    for exercise, group in groupby(ordered, key=lambda s: s.exercise):
        subs = [(s, old_distinctive(normalise(s.source), stub_tokens.get(exercise, []))) for s in group]
        positioned = []
        for s, toks in subs:
            if len(toks) >= min_tokens:
                bits: dict[str, int] = defaultdict(int)
                for j, t in enumerate(toks):
                    bits[t] |= 1 << j
                positioned.append((s, toks, bits))
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        for j, (b, b_toks, b_bits) in enumerate(positioned):
            matcher.set_seq2(b_toks)
            for a, a_toks, _ in positioned[:j]:
                matcher.set_seq1(a_toks)
                if (matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold
                        or old_lcs_ratio(a_toks, b_bits, len(b_toks)) < threshold):
                    continue
                if (ratio := matcher.ratio()) >= threshold:
                    pairs.append(Pair(exercise, a, b, round(ratio, 3)))
    return pairs


def big_file() -> str:
    """Legal Python just under the 1 MiB submission cap: many small, distinct functions."""
    unit = "def f{n}(x, y):\n    z = x * {n} + y\n    return [z for _ in range(3)] if z else None\n\n"
    parts, size, n = [], 0, 0
    while size < MAX_SUBMISSION_BYTES - 200:
        parts.append(unit.format(n=n))
        size, n = size + len(parts[-1]), n + 1
    return "".join(parts)


def typical(exercise: str, n: int) -> tuple[list[Submission], dict[str, str]]:
    ex = load_exercise(exercise)
    files = [item.source() for item in corpus(ex, more=True) if item.kind != "stub"]  # patches applied
    subs = [Submission(f"c{i:03d}", ex.name, f"# candidate {i}\n" + files[i % len(files)], None)
            for i in range(n)]
    return subs, {ex.name: ex.stub.read_text()}


def _run(which: str, subs, stubs, out) -> None:
    t0 = time.perf_counter()
    pairs = (old_similar_pairs if which == "old" else similar_pairs)(subs, stubs)
    out.put((time.perf_counter() - t0, len(pairs)))


def timed(which: str, subs, stubs, cap: float) -> tuple[float | None, int | None]:
    """(seconds, pairs found), or (None, None) when it ran past ``cap`` and was killed."""
    out = multiprocessing.Queue()
    proc = multiprocessing.Process(target=_run, args=(which, subs, stubs, out))
    proc.start()
    proc.join(cap)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return None, None
    return out.get()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--cap", type=float, default=120.0, help="seconds the old pass gets per workload")
    parser.add_argument("--exercise", default="attention")
    args = parser.parse_args()

    text = big_file()
    workloads = {
        f"2 identical files of {len(text) / 2**20:.2f} MiB": ([Submission("a", "x", text, None),
                                                                 Submission("b", "x", text, None)], {}),
        f"{args.n} typical {args.exercise} submissions": typical(args.exercise, args.n),
    }
    print(f"{'workload':<40} {'old':>10} {'new':>10} {'old/new':>9}  pairs old/new")
    ratio = None
    for name, (subs, stubs) in workloads.items():
        new, new_pairs = timed("new", subs, stubs, cap=3600)
        old, old_pairs = timed("old", subs, stubs, cap=args.cap)
        shown_old = f">{args.cap:g} s" if old is None else f"{old:.2f} s"
        r = (args.cap if old is None else old) / new
        print(f"{name:<40} {shown_old:>10} {new:>8.2f} s {('>' if old is None else '') + f'{r:.1f}':>9}  "
              f"{'?' if old_pairs is None else old_pairs}/{new_pairs}")
        ratio = ratio or (f">{r:.1f}" if old is None else f"{r:.1f}")
    published_answers(args.exercise, workloads, text)
    print(f"ratio={ratio}")


def published_answers(exercise: str, workloads: dict, text: str) -> None:
    """The pass with and without the published comparison, on the same inputs, one after the other."""
    ex = load_exercise(exercise)
    files, _ = published_files({ex.name: ex}, solution_folders(None))
    subs, stubs = list(workloads.values())[1]
    big = ([Submission("a", ex.name, text, None)], stubs)
    print(f"{'published answers (' + str(len(files[ex.name])) + ' files)':<40} {'without':>10} {'with':>10} {'with/without':>13}")
    for name, (group, stub) in {f"{len(subs)} typical {ex.name} submissions": (subs, stubs),
                                "1 file of 1 MiB": big}.items():
        t0 = time.perf_counter()
        compare(group, stub, budget_s=None)
        t1 = time.perf_counter()
        found = compare(group, stub, budget_s=None, published=files)
        t2 = time.perf_counter()
        print(f"{name:<40} {t1 - t0:>8.2f} s {t2 - t1:>8.2f} s {(t2 - t1) / (t1 - t0):>13.2f}  "
              f"{len(found.published)} matched")


if __name__ == "__main__":
    main()
