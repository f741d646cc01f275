"""Name the mistake a grading shows, only where the evidence says so, from the exercise's mistake record.

A grading's lost checks (how each was lost and what it said: :mod:`grader.hindsight.evidence`) are matched with
each recorded mutant's: a check both lost counts only when it says the same (words, and values within a
tolerance), one that says something else rules the mutant out, and the score is |same| / |F ∪ S|. The best
mutant is named at :data:`MIN_SIMILARITY` or more when no other is as close (a tie names neither); nothing for
a grading not graded, not importing, at full marks, untouched or tampering, nor from a stale record or one
without evidence. When nothing is named and losses were not wrong answers, it says what happened instead. A
candidate sees it only where every check involved is visible. The rule in full: docs/decisions/diagnosis-evidence.md.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from grader.hindsight.records import (EVIDENCE_SINCE, Loss, MistakeRecord, Signature, counted_checks, flavor_of,
                                      losses)
from grader.wire.grant import Flavor
from grader.reports.model import Diagnosis, FindingKind, Report, Visibility

#: The least similarity between a grading's losses and a signature that names the mutant.
MIN_SIMILARITY = 0.75


@dataclass(frozen=True)
class Match:
    mutant: str
    held_in: bool
    matched: int  # checks both lost, and lost the same way
    signature: int  # |S|
    similarity: float


def matches(lost: Signature, counted: set[str], record: MistakeRecord, flavor: Flavor = Flavor.CPU) -> list[Match]:
    """Every mutant no shared check speaks against, with its similarity to ``lost`` in ``flavor``'s record, best
    first (held-in before more_mutants/, then by name)."""
    out = []
    for m in record.mutants:
        sig = (m.signature(flavor) or Signature()).within(counted)
        if not sig.lost:
            continue
        both = lost.same_way(sig)
        if both < len(lost.checks & sig.checks):
            continue  # a check both lost says something else: evidence of another mistake
        out.append(Match(m.name, m.held_in, both, len(sig.lost), both / len(lost.checks | sig.checks)))
    return sorted(out, key=lambda x: (-x.similarity, not x.held_in, x.mutant))


def nearest(lost: Signature, counted: set[str], record: MistakeRecord, flavor: Flavor = Flavor.CPU) -> list[Match]:
    """The mutant the rule above names for ``lost``, as a list of at most one (empty: none matches well enough,
    or two match equally well)."""
    if not lost.lost or flavor not in record.checks or record.schema_version < EVIDENCE_SINCE:
        return []
    ranked = matches(lost, counted, record, flavor)
    if not ranked or ranked[0].similarity < MIN_SIMILARITY:
        return []
    if len(ranked) > 1 and ranked[1].similarity >= ranked[0].similarity - 1e-9:
        return []  # a tie names neither
    return ranked[:1]


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
