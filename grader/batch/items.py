"""Item analysis: is each check a fair question, and does an exercise's score measure one thing?

Classical test theory on a batch's graded reports, per exercise, each check id an item: difficulty
(the share who got its full points), discrimination (the corrected item-rest correlation) and
reliability (Cronbach's alpha, named KR-20 when it is). Only graded reports count; skipped checks
are left out per candidate, the rest score and alpha use the checks that ran for everyone. Below
:data:`MIN_CANDIDATES` no figure is computed (the panel reads a sentence, not noise); an undefined
figure is ``None``, never NaN. See docs/decisions/item-analysis.md.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

import numpy as np

from grader.batch.model import Row, RowStatus
from grader.reports.model import CheckResult, Report, Status

#: Below this many graded candidates the figures are noise: none is shown.
MIN_CANDIDATES = 10
#: Flags, in the order the panel lists them.
EVERYBODY_PASSES = "everybody_passes"
NOBODY_PASSES = "nobody_passes"
NEGATIVE_DISCRIMINATION = "negative_discrimination"
FLAG_LABELS = {EVERYBODY_PASSES: "everybody passes", NOBODY_PASSES: "nobody passes",
               NEGATIVE_DISCRIMINATION: "negative discrimination"}

Method = Literal["KR-20", "Cronbach's alpha"]


@dataclass(frozen=True)
class ItemStats:
    """One check of one exercise across the batch."""

    check: str  # the check's id
    name: str
    points: float  # its max points
    ran: int  # graded candidates it ran for (not skipped)
    skipped: int  # graded candidates it did not run for (skipped, or absent from their report)
    full: int  # how many of them got its full points
    difficulty: float | None  # full / ran; None when the figures are not shown
    discrimination: float | None  # corrected item-rest r; None when undefined or not shown
    flags: tuple[str, ...] = ()
    note: str = ""  # why a figure is None, for the panel and the CSV


@dataclass(frozen=True)
class ExerciseItems:
    """Every check of one exercise, and how consistently they agree."""

    exercise: str
    graded: int  # graded candidates: the ones counted
    excluded: dict[str, int]  # RowStatus value -> rows left out (not graded, empty, invalid, missing, ...)
    items: list[ItemStats]
    shown: bool  # False below MIN_CANDIDATES: no figure was computed
    why_not_shown: str
    reliability: float | None
    method: Method | None  # None when no figure is shown
    core: int  # checks in the reliability figure (those that ran for every graded candidate)
    reliability_note: str = ""


def analyse(rows: list[Row], order: list[str] = ()) -> list[ExerciseItems]:
    """One :class:`ExerciseItems` per exercise the rows name (``order`` first, then the rest by name)."""
    by_exercise: dict[str, list[Row]] = {name: [] for name in order}
    for r in sorted(rows, key=lambda r: r.exercise):
        if r.status is not RowStatus.UNKNOWN_EXERCISE:
            by_exercise.setdefault(r.exercise, []).append(r)
    return [analyse_exercise(name, mine) for name, mine in by_exercise.items()]


def analyse_exercise(exercise: str, rows: list[Row]) -> ExerciseItems:
    """The item analysis of one exercise from its rows (graded ones counted, the others named)."""
    graded = [r.report for r in rows if _counted(r)]
    excluded = dict(Counter(r.status.value for r in rows if not _counted(r)))
    results = _by_check(graded)
    names = {c.id: c.name or c.id for report in graded for c in report.checks}
    points = {c.id: c.max_score for report in reversed(graded) for c in report.checks}
    n = len(graded)
    if n < MIN_CANDIDATES:
        why = (f"Not meaningful yet: {n} graded candidate{'s' if n != 1 else ''}; item figures need at least "
               f"{MIN_CANDIDATES}, since with fewer one candidate moves a correlation by a lot.")
        items = [_counts(cid, names[cid], points[cid], got, n) for cid, got in results.items()]
        return ExerciseItems(exercise, n, excluded, items, False, why, None, None, 0)
    core = [cid for cid, got in results.items() if all(g is not None for g in got)]
    matrix = np.array([[results[cid][i].score for cid in core] for i in range(n)], dtype=float).reshape(n, len(core))
    total = matrix.sum(axis=1)
    items = []
    for cid, got in results.items():
        ran = [i for i, g in enumerate(got) if g is not None]
        x = np.array([got[i].score for i in ran], dtype=float)
        rest = total[ran] - (x if cid in core else 0.0)
        items.append(_figures(_counts(cid, names[cid], points[cid], got, n), x, rest))
    alpha, note = cronbach_alpha(matrix)
    dichotomous = all(g.score in (0.0, g.max_score) for cid in core for g in results[cid])
    method: Method = "KR-20" if dichotomous and len({points[cid] for cid in core}) <= 1 else "Cronbach's alpha"
    skipped_some = len(results) - len(core)
    if skipped_some and alpha is not None:
        note = f"over the {len(core)} checks that ran for everyone ({skipped_some} skipped for some candidates)"
    return ExerciseItems(exercise, n, excluded, items, True, "", alpha, method, len(core), note)


def _counted(row: Row) -> bool:
    return row.status is RowStatus.GRADED and row.report is not None


def _by_check(graded: list[Report]) -> dict[str, list[CheckResult | None]]:
    """Check id (in first-seen order) -> per candidate: its result, or None where it did not run."""
    results: dict[str, list[CheckResult | None]] = {}
    for i, report in enumerate(graded):
        for c in report.checks:
            results.setdefault(c.id, [None] * len(graded))
            if c.status is not Status.SKIPPED and results[c.id][i] is None:
                results[c.id][i] = c
    return results


def _counts(cid: str, name: str, points: float, got: list[CheckResult | None], n: int) -> ItemStats:
    ran = [g for g in got if g is not None]
    full = sum(g.status is Status.PASSED and g.score >= g.max_score for g in ran)
    return ItemStats(cid, name, points, len(ran), n - len(ran), full, None, None)


def _figures(item: ItemStats, x: np.ndarray, rest: np.ndarray) -> ItemStats:
    """Difficulty, discrimination and flags for one check that ran for ``item.ran`` candidates."""
    if item.ran < MIN_CANDIDATES:
        return _with(item, note=f"ran for only {item.ran} candidates (skipped for {item.skipped}): not meaningful yet")
    difficulty = item.full / item.ran
    r, note = pearson(x, rest)
    flags = [flag for flag, on in ((EVERYBODY_PASSES, item.full == item.ran), (NOBODY_PASSES, item.full == 0),
                                   (NEGATIVE_DISCRIMINATION, r is not None and r < 0)) if on]
    return _with(item, difficulty=difficulty, discrimination=r, flags=tuple(flags), note=note)


def _with(item: ItemStats, **changes) -> ItemStats:
    return ItemStats(**{**item.__dict__, **changes})


def pearson(x: np.ndarray, y: np.ndarray) -> tuple[float | None, str]:
    """Pearson's r, or None and why when it is undefined (either side the same for every candidate)."""
    if len(x) < 2 or np.ptp(x) == 0:
        return None, "undefined: every candidate scored the same on this check"
    if np.ptp(y) == 0:
        return None, "undefined: every candidate scored the same on the rest of the exercise"
    dx, dy = x - x.mean(), y - y.mean()
    r = float(dx @ dy / np.sqrt((dx @ dx) * (dy @ dy)))
    if abs(r) < 1e-12:  # rounding noise around 0 must not read as (or flag) a negative correlation
        r = 0.0
    return max(-1.0, min(1.0, r)), ""


def cronbach_alpha(matrix: np.ndarray) -> tuple[float | None, str]:
    """alpha = k/(k-1) * (1 - sum of item variances / variance of the total), rows = candidates.

    With pass/fail items of equal points this equals KR-20, k/(k-1) * (1 - sum p*q / var):
    the variance of a 0/1 item is p*q (population variances on both sides).
    """
    k = matrix.shape[1]
    if k < 2:
        return None, f"undefined: needs at least 2 checks that ran for every candidate, has {k}"
    total = matrix.sum(axis=1)
    if np.ptp(total) == 0:
        return None, "undefined: every candidate got the same score"
    return float(k / (k - 1) * (1 - matrix.var(axis=0).sum() / total.var())), ""
