"""Name the mistake a grading most likely shows, from the exercise's recorded mutant signatures.

Each mutant of an exercise is a named mistake, and ``grader validate --record`` wrote down
which checks each one loses points on (:mod:`grader.mistakes`). A grading that loses points
on nearly the same checks most likely made nearly the same mistake, and a panel reads
"looks like: scores scaled by √d_model instead of √d_head" faster than five failed checks.

The rule, chosen so that a wrong name is rarer than a missing one:

* Nothing is diagnosed for a grading that was not graded, whose file does not import, that
  earned full marks or lost nothing, that is the untouched stub, or that lost its credit for
  tampering (its failures are the penalty, not a pattern); nor from a stale record
  (signatures measured on other checks).
* F is the set of check functions this grading lost points on, S a mutant's signature cut to
  the checks this grading counted (a GPU check skipped here says nothing). The match is their
  Jaccard similarity |F ∩ S| / |F ∪ S|: it falls both for failures the mutant does not explain
  and for checks the mutant fails that this file passes.
* The mutants at the best similarity are named when it is at least :data:`MIN_SIMILARITY`:
  all of them when they tie (mistakes no check tells apart), at most :data:`MAX_NAMED`, the
  held-in ones (``mutants/``, the curated set CI grades) first, then by name. Several names
  with one "matches n of n" tell the panel that the checks cannot tell those mistakes apart.

Measured on the 17 exercises' records (``bench/diagnosis_accuracy.py``): every held-in mutant is
named as itself (190/190). A mistake the record does not hold is named wrongly for two reasons:
its checks fail exactly like a recorded one's (the checks cannot tell them apart; no threshold
helps), or it fails nearly the same checks. The threshold acts on the second only: of 53
more_mutants against a held-in-only record, 14 partial matches at 0.5, 6 at 0.6, 4 at 0.75, none
at 1.0. 0.75 keeps a near match (a mistake plus one more failure) and drops most of the rest.

A diagnosis is shown to a candidate only when every check in F and S is visible and the
exercise allows it (``[diagnosis] candidates``): it then says nothing about a hidden check
that their scorecard does not.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.mistakes import MistakeRecord, check_function, counted_checks, lost_points
from grader.reports.model import Diagnosis, FindingKind, Report, Visibility

#: The least Jaccard similarity between failed checks and a signature that names the mutant.
MIN_SIMILARITY = 0.75
#: At most this many mutants are named (of a tie among more: the held-in ones first, then by name).
MAX_NAMED = 3


@dataclass(frozen=True)
class Match:
    mutant: str
    held_in: bool
    matched: int  # |F ∩ S|
    signature: int  # |S|
    similarity: float


def matches(failed: set[str], counted: set[str], record: MistakeRecord) -> list[Match]:
    """Every mutant's similarity to ``failed``, best first (held-in before more_mutants/, then by name)."""
    out = []
    for m in record.mutants:
        sig = set(m.signature) & counted
        if not sig:
            continue
        both = len(failed & sig)
        out.append(Match(m.name, m.held_in, both, len(sig), both / len(failed | sig)))
    return sorted(out, key=lambda x: (-x.similarity, not x.held_in, x.mutant))


def nearest(failed: set[str], counted: set[str], record: MistakeRecord) -> list[Match]:
    """The mutants the rule above names for ``failed`` (empty: none matches well)."""
    if not failed:
        return []
    ranked = matches(failed, counted, record)
    if not ranked or ranked[0].similarity < MIN_SIMILARITY:
        return []
    best = [m for m in ranked if m.similarity >= ranked[0].similarity - 1e-9]
    return best[:MAX_NAMED]


def diagnose(report: Report, record: MistakeRecord | None, *, fingerprint: str, candidates: bool = True,
             untouched_stub: bool = False) -> list[Diagnosis]:
    """The diagnoses of ``report`` against ``record`` (see the module's rule); ``fingerprint`` is the exercise's
    now, ``candidates`` its ``[diagnosis] candidates`` setting."""
    if (record is None or record.exercise_fingerprint != fingerprint or not report.graded or untouched_stub
            or report.load_error is not None or report.score >= report.max_score or report.violations
            or any(f.kind is FindingKind.TAMPERING for f in report.findings)):
        return []
    failed = set(lost_points(report))
    counted = set(counted_checks(report))
    hidden = {check_function(c.id) for c in report.checks if c.visibility is Visibility.HIDDEN}
    by_name = {m.name: m for m in record.mutants}
    out = []
    for match in nearest(failed, counted, record):
        mutant = by_name[match.mutant]
        involved = failed | (set(mutant.signature) & counted)
        out.append(Diagnosis(mutant=match.mutant, description=mutant.description, matched=match.matched,
                             failed=len(failed), signature=match.signature,
                             candidate_visible=candidates and not (involved & hidden)))
    return out
