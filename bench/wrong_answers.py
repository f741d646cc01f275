"""Diagnosis on wrong answers that are not the held mutants, graded for real (``diagnosis_accuracy.py``'s fifth figure).

Each ``bench/data/wrong_answers/<exercise>/<name>.diff`` is a candidate's file written as a patch (as mutants are)
against the correct answer of ``solutions/<exercise>/variants/`` it names: that answer with one slip. Above the
diff it says the mistake and which recorded mutant makes it ("Recorded as: <mutant>", or "nothing"). It is graded
in the local sandbox; a "looks like" naming any other mutant is false. GPU-required exercises are not graded here.
Beside each grading, what the rule before evidence would have named from the same losses (which checks and how
each was lost, every mutant of the best similarity named, up to three) shows what evidence changed.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from grader.exercise import GpuPolicy, load_exercise
from grader.hindsight.diagnosis import MIN_SIMILARITY
from grader.hindsight.records import Signature, counted_checks, flavor_of, load_record, losses
from grader.host.grading import grade
from grader.mutant_patch import read_patch

DATA = Path(__file__).resolve().parent / "data" / "wrong_answers"
SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"
_RECORDED = re.compile(r"^Recorded as: (.+)$", re.MULTILINE)


def recorded_as(description: str) -> set[str]:
    """The mutants a wrong answer's description says it makes (empty: none the record holds)."""
    found = _RECORDED.search(description)
    if found is None:
        raise SystemExit("a wrong answer must say 'Recorded as: <mutant>' or 'Recorded as: nothing'")
    names = {n.strip() for n in found.group(1).split(",")}
    return set() if names == {"nothing"} else names


def before_evidence(lost: Signature, counted: set[str], record, flavor) -> list[str]:
    """What the rule before evidence named: the same checks lost the same way (outcome and class), no evidence
    compared, every mutant at the best similarity (>= MIN_SIMILARITY) named, up to three."""
    scored = []
    for m in record.mutants:
        sig = (m.signature(flavor) or Signature()).within(counted)
        if not sig.lost:
            continue
        both = sum(1 for c, how in lost.lost.items() if c in sig.lost
                   and (how.how, how.detail) == (sig.lost[c].how, sig.lost[c].detail))
        scored.append((both / len(lost.checks | sig.checks), not m.held_in, m.name))
    scored.sort(key=lambda x: (-x[0], x[1], x[2]))
    if not scored or scored[0][0] < MIN_SIMILARITY:
        return []
    return [name for sim, _, name in scored if sim >= scored[0][0] - 1e-9][:3]


def wrong_answers(only: list[str]) -> None:
    """Grade every wrong answer (of ``only``'s exercises, or all) and print each one's "looks like" and the totals."""
    graded = false = true = with_truth = before_false = before_true = skipped = 0
    rows = []
    for folder in sorted(p for p in DATA.iterdir() if p.is_dir() and (not only or p.name in only)):
        ex = load_exercise(folder.name)
        if ex.config.exercise.gpu is GpuPolicy.REQUIRED:
            skipped += len(list(folder.glob("*.diff")))
            rows.append(f"  {folder.name}: not graded here (needs a GPU)")
            continue
        record = load_record(ex)
        for path in sorted(folder.glob("*.diff")):
            patch = read_patch(path)
            truth = recorded_as(patch.description)
            source = patch.apply_to(SOLUTIONS / folder.name / "variants" / patch.names[0])
            with tempfile.TemporaryDirectory() as tmp:
                staged = Path(tmp) / ex.config.exercise.submission
                staged.write_text(source, encoding="utf-8")
                report = grade(ex, staged, sandbox="local")
            if not report.graded:
                rows.append(f"  {folder.name}/{path.name}: not graded ({report.not_graded_reason})")
                continue
            graded += 1
            with_truth += bool(truth)
            named = [d.mutant for d in report.diagnosis if d.kind == "mistake"]
            old = [] if record is None else before_evidence(losses(report), set(counted_checks(report)), record,
                                                            flavor_of(report))
            wrong = [n for n in named if n not in truth]
            false += bool(wrong)
            true += bool(named) and not wrong
            before_false += any(n not in truth for n in old)
            before_true += bool(old) and all(n in truth for n in old)
            mark = "FALSE" if wrong else "true" if named else "-"
            rows.append(f"  {folder.name}/{path.name}: {report.score:g}/{report.max_score:g}, looks like "
                        f"{', '.join(named) or 'nothing'} ({mark}; recorded as {', '.join(sorted(truth)) or 'nothing'}; "
                        f"before evidence: {', '.join(old) or 'nothing'})")
    print("\n".join(rows))
    print(f"wrong answers graded: {graded} ({with_truth} make a recorded mistake; {skipped} skipped, GPU-required)")
    print(f"false looks-like: {false} (goal 0); before evidence: {before_false}")
    print(f"true looks-like: {true}/{with_truth} of those that make a recorded mistake "
          f"({true / max(with_truth, 1):.0%}); before evidence: {before_true}/{with_truth}")
    print(f"false_diagnoses={false} true_diagnosis_share={true / max(with_truth, 1):.3f}")
