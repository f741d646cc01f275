"""How often diagnosis names the right mistake, and how often a wrong one, from the stored records.

No grading: each mutant's signature in ``exercises/<ex>/mistakes.json`` is the set of checks
validate saw it fail, which is exactly what a grading of that file would match. Three figures,
side by side:

* held-in: each mutant of ``mutants/`` against the record it is in: named itself (a tie names neither)?
  And every mutant (more_mutants/ too) against the stored record, which holds both.
* held-out: each mutant of ``more_mutants/`` against a record of ``mutants/`` only (what CI's
  ``validate --record`` without ``--more`` would hold): any name is a mistake that is not the file's;
  split into ties on an identical signature (the checks cannot tell them apart) and partial matches.
* leave-one-out: each mutant against the full record without itself: a mistake nobody recorded.

Correct files (the reference, every variant) earn full marks in validate, and a full-marks
grading is never diagnosed: 0 by rule, and ``tests/test_mistakes.py`` grades a reference and a
variant to hold it.

And a fourth (issue 26): no false "looks like" for losses that are not wrong answers. For every
recorded signature (and every exercise's whole set of checks), the same checks lost instead by a
timeout, by a NotImplementedError (the untouched stub's), by a sandbox crash, and by a forbidden API
the record does not hold: each is matched against the full record. A name given to one of them is
false unless a recorded mutant lost those checks that very way; every one of them should get an
"outcome" line saying what happened instead.

And a fifth, graded for real: ``bench/data/wrong_answers/<exercise>/*.diff``, wrong answers written from
each prompt as a candidate would err (not the held mutants), each saying which recorded mistake it makes
("Recorded as: <mutant>", or "nothing" where no recorded mutant makes it). Each is graded in the local sandbox and
its "looks like" compared with that: a name that is not the file's mistake is false (goal 0); the share that
gets its true name is printed too, beside what the rule before evidence (which checks and how, ties all named)
would have named. GPU-required exercises are skipped without a GPU. Run:
``.venv/bin/python bench/diagnosis_accuracy.py [--records-only] [--exercise NAME ...]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.exercise import load_exercise  # noqa: E402
from grader.hindsight.diagnosis import nearest  # noqa: E402
from grader.hindsight.records import Loss, Lost, MistakeRecord, Signature, load_record  # noqa: E402
from grader.wire.grant import Flavor  # noqa: E402
from grader.host.validation import all_exercise_names  # noqa: E402
from wrong_answers import wrong_answers  # noqa: E402

#: How the corpus of issue 26 loses a set of checks: none of these is a wrong answer (each with the evidence a grading
#: of an unparametrized check gives it, grader.hindsight.evidence).
NOT_ANSWERS = {"timeout": Lost(how=Loss.TIMEOUT, evidence=["timeout"]),
               "NotImplementedError": Lost(how=Loss.ERROR, detail="NotImplementedError",
                                           evidence=["raised NotImplementedError"]),
               "crash": Lost(how=Loss.ERROR, evidence=["crashed"]),
               "forbidden": Lost(how=Loss.FORBIDDEN, detail="torch.not_in_any_record", evidence=["forbidden"])}


#: The records measured here are the cpu ones (a cuda record is written on a GPU host; see grader.hindsight.records).
FLAVOR = Flavor.CPU


def sig(m) -> Signature:
    return m.signature(FLAVOR) or Signature()


def named(signature: Signature, rec: MistakeRecord) -> list[str]:
    return [m.mutant for m in nearest(signature, set(rec.checks[FLAVOR]), rec, FLAVOR)]


def which_checks_only(rec: MistakeRecord) -> MistakeRecord:
    """The record as the rule before issue 26 read it: which checks, not how (every loss a wrong answer)."""
    def blind(s: Signature) -> Signature:
        return Signature(lost={c: Lost(how=Loss.FAILED) for c in s.lost})
    return rec.model_copy(update={"mutants": [m.model_copy(update={"signatures": {FLAVOR: blind(sig(m))}})
                                              for m in rec.mutants]})


def not_answers(rec: MistakeRecord) -> tuple[int, int, int, int, list[str]]:
    """(gradings, falsely named, rightly named, named by the rule before issue 26, lines): every recorded check
    set, and all checks, lost in each way of NOT_ANSWERS. A name is right only when the named mutant lost every
    one of those checks that same way. The old rule compared which checks alone."""
    check_sets = {tuple(sorted(sig(m).lost)) for m in rec.mutants} | {tuple(rec.checks[FLAVOR])}
    blind = which_checks_only(rec)
    n = false = right = before = 0
    lines = []
    by_name = {m.name: m for m in rec.mutants}
    for checks in sorted(check_sets):
        for kind, how in NOT_ANSWERS.items():
            grading = Signature(lost={c: how for c in checks})
            n += 1
            before += bool(named(Signature(lost={c: Lost(how=Loss.FAILED) for c in checks}), blind))
            for name in named(grading, rec):
                if grading.same_way(sig(by_name[name]).within(set(checks))) == len(checks):
                    right += 1
                else:
                    false += 1
                    lines.append(f"  false looks-like {rec.exercise}: {len(checks)} checks lost by {kind} -> {name}")
    return n, false, right, before, lines


def records_only() -> None:
    held = held_self = held_alone = 0
    every = every_self = 0
    out_n = out_named = out_tied = 0
    loo_n = loo_named = loo_tied = 0
    corpus_n = corpus_false = corpus_right = corpus_before = 0
    rows = []
    for name in all_exercise_names():
        rec = load_record(load_exercise(name))
        if rec is None:
            print(f"{name}: no record")
            continue
        n, false, right, before, lines = not_answers(rec)
        corpus_n, corpus_false, corpus_right = corpus_n + n, corpus_false + false, corpus_right + right
        corpus_before += before
        rows += lines
        held_in = rec.model_copy(update={"mutants": [m for m in rec.mutants if m.held_in]})
        for m in rec.mutants:
            every += 1
            every_self += m.name in named(sig(m), rec)
            if m.held_in:
                got = named(sig(m), rec)
                held += 1
                held_self += m.name in got
                held_alone += got == [m.name]
            else:
                got = named(sig(m), held_in)
                out_n += 1
                if got:
                    out_named += 1
                    tie = all(sig(x) == sig(m) for x in held_in.mutants if x.name in got)
                    out_tied += tie
                    rows.append(f"  held-out {name}/{m.name} -> {', '.join(got)}{' (same signature)' if tie else ''}")
            without = rec.model_copy(update={"mutants": [x for x in rec.mutants if x.name != m.name]})
            got = named(sig(m), without)
            loo_n += 1
            if got:
                loo_named += 1
                loo_tied += all(sig(x) == sig(m) for x in without.mutants if x.name in got)
    print("\n".join(rows))
    print(f"held-in mutants named as themselves: {held_self}/{held} ({held_alone} alone; the rest tie with a mutant "
          "whose checks say exactly the same, and a tie names neither)")
    print(f"every mutant against the stored record (mutants/ and more_mutants/): {every_self}/{every} named itself "
          "(the rest tie with another recorded mutant: named neither)")
    print(f"held-out (more_mutants vs a held-in record): {out_named}/{out_n} given a wrong name "
          f"({out_tied} of them a tie on an identical signature, {out_named - out_tied} a partial match), "
          f"{out_n - out_named} no diagnosis")
    print(f"leave-one-out (every mutant vs the record without it): {loo_named}/{loo_n} given a wrong name "
          f"({loo_tied} identical signature, {loo_named - loo_tied} partial)")
    print(f"timeouts, crashes, NotImplementedError and forbidden-only losses of every recorded check set: "
          f"{corpus_false}/{corpus_n} given a false looks-like ({corpus_right} named a mutant that lost them the "
          f"same way; the rest say what happened); matching which checks alone (before issue 26): "
          f"{corpus_before}/{corpus_n} named")
    print(f"misdiagnosed_held_out={out_named / max(out_n, 1):.3f} misdiagnosed_leave_one_out={loo_named / max(loo_n, 1):.3f} "
          f"false_looks_like_not_answers={corpus_false / max(corpus_n, 1):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records-only", action="store_true", help="no grading: the four figures from the records")
    parser.add_argument("--exercise", action="append", default=[], help="grade only this exercise's wrong answers")
    args = parser.parse_args()
    if not args.exercise:
        records_only()
    if not args.records_only:
        wrong_answers(args.exercise)


if __name__ == "__main__":
    main()
