"""How often diagnosis names the right mistake, and how often a wrong one, from the stored records.

No grading: each mutant's signature in ``exercises/<ex>/mistakes.json`` is the set of checks
validate saw it fail, which is exactly what a grading of that file would match. Three figures,
side by side:

* held-in: each mutant of ``mutants/`` against the record it is in: named itself (alone or in a tie)?
  And every mutant (more_mutants/ too) against the stored record, which holds both.
* held-out: each mutant of ``more_mutants/`` against a record of ``mutants/`` only (what CI's
  ``validate --record`` without ``--more`` would hold): any name is a mistake that is not the file's;
  split into ties on an identical signature (the checks cannot tell them apart) and partial matches.
* leave-one-out: each mutant against the full record without itself: a mistake nobody recorded.

Correct files (the reference, every variant) earn full marks in validate, and a full-marks
grading is never diagnosed: 0 by rule, and ``tests/test_mistakes.py`` grades a reference and a
variant to hold it. Run: ``.venv/bin/python bench/diagnosis_accuracy.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.exercise import load_exercise  # noqa: E402
from grader.judge.diagnosis import nearest  # noqa: E402
from grader.mistakes import MistakeRecord, load_record  # noqa: E402
from grader.sandbox.flavor import Flavor  # noqa: E402
from grader.validation import all_exercise_names  # noqa: E402


def named(sig: list[str], rec: MistakeRecord, flavor: Flavor) -> list[str]:
    return [m.mutant for m in nearest(set(sig), set(rec.checks[flavor]), rec, flavor)]


def main() -> None:
    held = held_self = held_alone = 0
    every = every_self = 0
    out_n = out_named = out_tied = 0
    loo_n = loo_named = loo_tied = 0
    rows = []
    for name in all_exercise_names():
        rec = load_record(load_exercise(name))
        if rec is None:
            print(f"{name}: no record")
            continue
        held_in = rec.model_copy(update={"mutants": [m for m in rec.mutants if m.held_in]})
        for flavor in rec.flavors:  # each flavour's signatures are matched among themselves
            for m in rec.mutants:
                every += 1
                every_self += m.name in named(m.signature(flavor), rec, flavor)
                if m.held_in:
                    got = named(m.signature(flavor), rec, flavor)
                    held += 1
                    held_self += m.name in got
                    held_alone += got == [m.name]
                else:
                    got = named(m.signature(flavor), held_in, flavor)
                    out_n += 1
                    if got:
                        out_named += 1
                        tie = all(x.signature(flavor) == m.signature(flavor) for x in held_in.mutants if x.name in got)
                        out_tied += tie
                        rows.append(f"  held-out {name}/{m.name} -> {', '.join(got)}{' (same signature)' if tie else ''}")
                without = rec.model_copy(update={"mutants": [x for x in rec.mutants if x.name != m.name]})
                got = named(m.signature(flavor), without, flavor)
                loo_n += 1
                if got:
                    loo_named += 1
                    loo_tied += all(x.signature(flavor) == m.signature(flavor) for x in without.mutants if x.name in got)
    print("\n".join(rows))
    print(f"held-in mutants named as themselves: {held_self}/{held} ({held_alone} alone, the rest in a tie)")
    print(f"every mutant against the stored record (mutants/ and more_mutants/): {every_self}/{every} named itself "
          "(the rest lost a tie of more than 3 to held-in mutants)")
    print(f"held-out (more_mutants vs a held-in record): {out_named}/{out_n} given a wrong name "
          f"({out_tied} of them a tie on an identical signature, {out_named - out_tied} a partial match), "
          f"{out_n - out_named} no diagnosis")
    print(f"leave-one-out (every mutant vs the record without it): {loo_named}/{loo_n} given a wrong name "
          f"({loo_tied} identical signature, {loo_named - loo_tied} partial)")
    print(f"misdiagnosed_held_out={out_named / max(out_n, 1):.3f} misdiagnosed_leave_one_out={loo_named / max(loo_n, 1):.3f}")


if __name__ == "__main__":
    main()
