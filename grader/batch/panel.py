"""The hiring panel's overview page (``index.html``): every candidate against every exercise.

The page must not mislead: infrastructure failure is a loud "not graded — rerun", never a 0; a check
error is named as the grader's bug; a candidate with either has no total to compare; the untouched stub
is a row of its own; a result from the local sandbox is marked not isolated; colour is never the only
cue. The data is shaped here into plain views; ``templates/panel.html.j2`` lays it out (autoescaped).
Self-contained: inline CSS, SVG charts and a small script that sorts and filters (it reads the same
without). The table uses the window's width, the candidate and total columns stay in view when it
scrolls sideways, and long texts wrap or fold, so no row grows tall.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from grader.batch.charts import Histogram, PassRate, histogram, pass_rates
from grader.batch.cells import FLAG_LABELS as FLAG_WORDS
from grader.batch.cells import WORDS, Cell, cell, similar_by_row, total
from grader.batch.items import FLAG_LABELS, analyse_exercise
from grader.batch.model import Row, RowStatus
from grader.batch.summary import summarize
from grader.reports import templating
from grader.reports.headline import not_counted_lines
from grader.reports.headline import fmt_points

#: How excluded rows are counted under a chart ("2 missing").
EXCLUDED = {RowStatus.NOT_GRADED: "not graded (rerun)", RowStatus.EMPTY: "empty (scored 0)",
            RowStatus.INVALID: "invalid (scored 0)", RowStatus.UNTOUCHED_STUB: "untouched stub (scored 0)",
            RowStatus.CHECK_ERROR: "check error (not graded)"}
#: A "Looks like" cell shows this many lines; the rest fold under "+N more".
LOOKS_SHOWN = 2


@dataclass(frozen=True)
class CandidateRow:
    name: str
    cells: list[Cell]
    total: Cell
    notes: list[str]  # rows not tied to a known exercise (unknown exercise folders)
    looks_like: list[tuple[str, str, str]] = ()  # (exercise, its title, "looks like: ..."): the "Looks like" column

    @property
    def flags(self) -> str:
        """The flag kinds of the candidate's cells, space-separated: what the flag filter matches."""
        return " ".join(sorted({f.kind for c in self.cells for f in c.flags}))


def looks_like(rows: list[Row | None], columns: dict[str, str]) -> list[tuple[str, str, str]]:
    """A candidate's diagnoses across exercises, in column order: what each graded row looks like. Named by
    the exercise's short name (its title is the column's header and the line's tooltip), so the two lines a
    folded cell shows are mostly the diagnosis itself."""
    return [(r.exercise, columns[r.exercise], d.line) for r in rows if r is not None and r.report is not None
            and r.status is RowStatus.GRADED for d in r.report.diagnosis]


@dataclass(frozen=True)
class ExerciseView:
    name: str
    title: str
    max_score: str | None
    graded: int
    excluded: list[str]  # "1 not graded (rerun)", "2 missing"
    histogram: Histogram | None
    checks: list[PassRate]


def _exercise_view(name: str, title: str, rows: list[Row], max_score: float | None) -> ExerciseView:
    """Charts for one exercise from its graded rows; every other row is counted as left out, by status."""
    counted = [r.status is RowStatus.GRADED and r.score is not None for r in rows]
    graded = [r for r, ok in zip(rows, counted) if ok]
    excluded = Counter(r.status for r, ok in zip(rows, counted) if not ok)
    return ExerciseView(
        name, title, fmt_points(max_score) if max_score is not None else None, len(graded),
        [f"{n} {EXCLUDED.get(s, WORDS.get(s, s.value))}" for s, n in excluded.items()],
        histogram([r.score for r in graded], max_score, what=title),
        pass_rates([r.report for r in graded if r.report is not None]))


def render_panel(rows: list[Row], pairs: list, *, exercises: dict[str, str], title: str = "Batch results",
                 generated_at: str = "", problems: list[str] = (), published: int = 0,
                 ignored: list[str] = ()) -> str:
    """The self-contained ``index.html`` for a batch.

    ``exercises`` maps exercise name -> title (the columns, in order; an exercise only
    the rows name gets a column too); ``pairs`` are the similarity pairs in the order
    ``similarity.html`` numbers them; ``problems`` are layout problems tied to no row; ``published`` is how
    many submissions match a published answer (each row's flag names its file); ``ignored`` the
    files the batch did not read (not submissions), named apart from the problems.
    """
    similar = similar_by_row(pairs)
    known = [r for r in rows if r.status is not RowStatus.UNKNOWN_EXERCISE]
    columns = dict(exercises) | {r.exercise: r.exercise for r in sorted(known, key=lambda r: r.exercise)
                                 if r.exercise not in exercises}
    by_exercise: dict[str, list[Row]] = {ex: [] for ex in columns}
    notes: dict[str, list[str]] = {}
    for r in rows:
        if r.status is RowStatus.UNKNOWN_EXERCISE:
            notes.setdefault(r.candidate, []).append(f"{r.exercise}/: {r.reason or 'not an exercise'}")
        else:
            by_exercise[r.exercise].append(r)
    maxima = {ex: max(m) for ex, mine in by_exercise.items() if (m := [r.max_score for r in mine
                                                                         if r.max_score is not None])}
    by_key = {(r.candidate, r.exercise): r for r in known}
    candidates = sorted({r.candidate for r in rows}, key=lambda c: (c.casefold(), c))
    table = []
    for name in candidates:
        mine = [by_key.get((name, ex)) for ex in columns]
        cells = [cell(row, similar, maxima.get(ex)) for row, ex in zip(mine, columns)]
        table.append(CandidateRow(name, cells, total(cells, maxima), notes.get(name, []), looks_like(mine, columns)))
    views = [_exercise_view(ex, t, by_exercise[ex], maxima.get(ex)) for ex, t in columns.items()]
    flags = sorted({f.kind: f for c in table for x in c.cells for f in x.flags}.items())
    not_run = Counter(line for r in rows if r.report is not None and r.status.scored
                      for line in not_counted_lines(r.report.checks))
    return _env.get_template("panel.html.j2").render(
        title=title, generated_at=generated_at,
        summary=summarize(rows, len(candidates), list(problems), list(ignored)),
        columns=columns, maxima=maxima, table=table, exercises=views, pairs=len(pairs), published=published,
        rerun=[r for r in rows if r.status is RowStatus.NOT_GRADED],
        check_errors=[r for r in rows if r.status is RowStatus.CHECK_ERROR],
        not_isolated=[r for r in rows if not r.isolated], not_run=sorted(not_run.items()),
        filters=[(kind, FLAG_WORDS.get(kind, kind)) for kind, _ in flags],
        looks_shown=LOOKS_SHOWN, items=[analyse_exercise(ex, by_exercise[ex]) for ex in columns])


_env = templating.environment("grader.batch")
_env.filters["points"] = fmt_points
_env.globals["item_flags"] = FLAG_LABELS
_env.globals["excluded_words"] = {s.value: EXCLUDED.get(s, WORDS.get(s, s.value)) for s in RowStatus}
