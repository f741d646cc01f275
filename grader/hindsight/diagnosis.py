"""Name the mistake a grading most likely shows, from the exercise's recorded mutant signatures.

Each mutant of an exercise is a named mistake, and ``grader validate --record`` wrote down
which checks each one loses points on (:mod:`grader.hindsight.records`). A grading that loses points
on nearly the same checks most likely made nearly the same mistake, and a panel reads
"looks like: scores scaled by √d_model instead of √d_head" faster than five failed checks.

The rule, chosen so that a wrong name is rarer than a missing one:

* Nothing is diagnosed for a grading that was not graded, whose file does not import, that
  earned full marks or lost nothing, that is the untouched stub, or that lost its credit for
  tampering (its failures are the penalty, not a pattern); and no mistake is named from a stale
  record (signatures measured on other checks).
* F is this grading's losses: each check function it lost points on, and how it was lost (a wrong
  answer, an exception of a given class or a crash, a timeout, a forbidden API: ``grader.hindsight.records.Loss``).
  S is a mutant's recorded losses cut to the checks this grading counted (a GPU check skipped here
  says nothing). The match is |checks both lost the same way| / |F ∪ S|: it falls for failures the
  mutant does not explain, for checks the mutant fails that this file passes, and for a check both lost
  in different ways (a timeout is not a wrong answer; a NotImplementedError is not a shape error).
  S is taken from the record of the grading's own flavour (``cuda`` for a grading given GPUs, else
  ``cpu``); a record without that flavour names nothing.
* The mutants at the best similarity are named when it is at least :data:`MIN_SIMILARITY`:
  all of them when they tie (mistakes no check tells apart), at most :data:`MAX_NAMED`, the
  held-in ones (``mutants/``, the curated set CI grades) first, then by name. Several names
  with one "matches n of n" tell the panel that the checks cannot tell those mistakes apart.
* When no mistake is named and some losses were not wrong answers, the diagnosis says what happened
  instead (``kind="outcome"``): "every lost check timed out (5 of 5)", "the code raised TypeError in
  every lost check", "no credit for the forbidden API ...". A timeout, a crash or a forbidden API is
  never presented as a wrong answer.

Measured on the exercises' records (``bench/diagnosis_accuracy.py``): every held-in mutant is
named as itself. A mistake the record does not hold is named wrongly for two reasons:
its checks fail exactly like a recorded one's (the checks cannot tell them apart; no threshold
helps), or it fails nearly the same checks. The threshold acts on the second only: of 53
more_mutants against a held-in-only record, 14 partial matches at 0.5, 6 at 0.6, 4 at 0.75, none
at 1.0. 0.75 keeps a near match (a mistake plus one more failure) and drops most of the rest. The
same bench grades no file: its corpus of timeouts, crashes and forbidden-only losses (built from the
records' own checks) must get no "looks like" at all.

A diagnosis is shown to a candidate only when every check in F and S is visible and the
exercise allows it (``[diagnosis] candidates``): it then says nothing about a hidden check
that their scorecard does not.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from grader.hindsight.records import Loss, MistakeRecord, Signature, counted_checks, flavor_of, losses
from grader.wire.grant import Flavor
from grader.reports.model import Diagnosis, FindingKind, Report, Visibility

#: The least similarity between a grading's losses and a signature that names the mutant.
MIN_SIMILARITY = 0.75
#: At most this many mutants are named (of a tie among more: the held-in ones first, then by name).
MAX_NAMED = 3


@dataclass(frozen=True)
class Match:
    mutant: str
    held_in: bool
    matched: int  # checks both lost, and lost the same way
    signature: int  # |S|
    similarity: float


def matches(lost: Signature, counted: set[str], record: MistakeRecord, flavor: Flavor = Flavor.CPU) -> list[Match]:
    """Every mutant's similarity to ``lost`` in ``flavor``'s record, best first (held-in before more_mutants/,
    then by name)."""
    out = []
    for m in record.mutants:
        sig = (m.signature(flavor) or Signature()).within(counted)
        if not sig.lost:
            continue
        both = lost.same_way(sig)
        out.append(Match(m.name, m.held_in, both, len(sig.lost), both / len(lost.checks | sig.checks)))
    return sorted(out, key=lambda x: (-x.similarity, not x.held_in, x.mutant))


def nearest(lost: Signature, counted: set[str], record: MistakeRecord, flavor: Flavor = Flavor.CPU) -> list[Match]:
    """The mutants the rule above names for ``lost`` (empty: none matches well)."""
    if not lost.lost or flavor not in record.checks:
        return []
    ranked = matches(lost, counted, record, flavor)
    if not ranked or ranked[0].similarity < MIN_SIMILARITY:
        return []
    best = [m for m in ranked if m.similarity >= ranked[0].similarity - 1e-9]
    return best[:MAX_NAMED]


def diagnose(report: Report, record: MistakeRecord | None, *, fingerprint: str, candidates: bool = True,
             untouched_stub: bool = False) -> list[Diagnosis]:
    """The diagnoses of ``report`` against ``record`` (see the module's rule); ``fingerprint`` is the exercise's
    now, ``candidates`` its ``[diagnosis] candidates`` setting."""
    if (not report.graded or untouched_stub or report.load_error is not None or report.score >= report.max_score
            or report.violations
            or any(f.kind is FindingKind.TAMPERING for f in report.findings)):
        return []
    lost = losses(report)
    hidden = {c.function for c in report.checks if c.visibility is Visibility.HIDDEN}
    answers_only = all(how.how is Loss.FAILED for how in lost.lost.values())
    out = []
    if record is not None and record.exercise_fingerprint == fingerprint:
        counted = set(counted_checks(report))
        by_name = {m.name: m for m in record.mutants}
        flavor = flavor_of(report)
        for match in nearest(lost, counted, record, flavor):
            mutant = by_name[match.mutant]
            involved = lost.checks | (mutant.signature(flavor) or Signature()).within(counted).checks
            out.append(Diagnosis(mutant=match.mutant, description=mutant.description, matched=match.matched,
                                 failed=len(lost.lost), signature=match.signature, answers_only=answers_only,
                                 candidate_visible=candidates and not (involved & hidden)))
    if not out and lost.lost and not answers_only:
        out.append(Diagnosis(kind="outcome", description=what_happened(lost), matched=0, failed=len(lost.lost),
                             signature=0, answers_only=False, candidate_visible=candidates and not (lost.checks & hidden)))
    return out


def what_happened(lost: Signature) -> str:
    """The grading's losses in words, when they are not (all) wrong answers: no mistake is named for them."""
    n = len(lost.lost)
    ways = Counter(_phrase(how.how, how.detail) for how in lost.lost.values())
    if len(ways) == 1:
        (phrase, _), = ways.items()
        how = next(iter(lost.lost.values()))
        nothing_back = how.how is Loss.TIMEOUT or (how.how is Loss.ERROR and how.detail is None)
        return f"every lost check {phrase} ({n} of {n})" + (": no answer came back to compare" if nothing_back else "")
    parts = ", ".join(f"{k} {phrase}" for phrase, k in sorted(ways.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{n} lost checks: {parts}"


def _phrase(how: Loss, detail: str | None) -> str:
    """What happened to a check, finishing "every lost check ..." or "3 ...": the judge's words only."""
    if how is Loss.TIMEOUT:
        return "timed out"
    if how is Loss.ERROR:
        return f"raised {detail} in the submission's code" if detail else "crashed the sandbox"
    if how is Loss.FORBIDDEN:
        return f"got no credit for the forbidden {detail}" if detail else "got no credit for a forbidden API"
    return "was a wrong answer"
