"""What ``grader validate --mutation`` shows: the score table, each survivor as a diff, and a JSON record.

A survivor is shown as the unified diff an author would save as ``mutants/NAME.diff`` (with a
description above it) once a check kills it, or record in ``equivalent_mutants.toml`` when
nothing can. The JSON holds every mutant's id, operator, place, outcome and the checks it
lost points on, so two runs can be compared mechanically.
"""

from __future__ import annotations

import json
from pathlib import Path

from grader.atomic import atomic_write
from grader.mutation.score import ExerciseMutation, Outcome
from grader.untrusted import in_markup

COLUMNS = ("exercise", "mutants", "graded", "killed", "survived", "timed out", "equivalent", "not graded", "score")


def score_text(score: float | None) -> str:
    return "-" if score is None else f"{score:.0%}"


def row(result: ExerciseMutation) -> tuple[str, ...]:
    """One exercise's line of the table: generated mutants, the sample graded, and each outcome's count."""
    return (result.exercise, str(result.generated),
            str(sum(r.outcome is not Outcome.EQUIVALENT for r in result.results)),
            *(str(result.count(o)) for o in (Outcome.KILLED, Outcome.SURVIVED, Outcome.TIMED_OUT,
                                             Outcome.EQUIVALENT, Outcome.NOT_GRADED)),
            score_text(result.score))


def print_exercise(console, result: ExerciseMutation, *, diffs: bool = True) -> None:
    """An exercise's survivors (as diffs), stale records and problems, as soon as it is graded."""
    console.print(f"[bold]{in_markup(result.exercise)}[/]: score {score_text(result.score)} "
                  f"({result.count(Outcome.KILLED)} killed of {len(result.results)} sampled from "
                  f"{result.generated} mutants, {len(result.dropped)} dropped before grading) "
                  f"in {result.duration_s:.1f} s")
    for r in result.survivors:
        console.print(f"  [yellow]survived[/] {in_markup(r.mutant.id)}: {in_markup(r.mutant.line_text)}")
        if diffs:
            console.print(in_markup(r.mutant.diff), highlight=False, soft_wrap=True)
    for r in result.results:
        if r.outcome is Outcome.NOT_GRADED:
            console.print(f"  [red]not graded[/] {in_markup(r.mutant.id)}: {in_markup(((r.reason or '').splitlines() or [''])[0])}")
    for s in result.stale:
        console.print(f"  [red]{in_markup(str(s))}[/]", soft_wrap=True)
    for p in result.problems:
        console.print(f"  [red]{in_markup(p)}[/]", soft_wrap=True)


def table(results: list[ExerciseMutation]):
    from rich.table import Table

    t = Table(title="mutation score: killed / (graded - not graded); equivalents are not graded", title_justify="left")
    for c in COLUMNS:
        t.add_column(c, justify="left" if c == "exercise" else "right")
    for result in results:
        t.add_row(*(in_markup(cell) for cell in row(result)))
    return t


def write_json(path: Path, results: list[ExerciseMutation], *, max_mutants: int | None, seed: int | None,
               complete: bool = True) -> None:
    """The run's outcomes so far; ``complete`` is False while exercises of the run are still to come."""
    record = {
        "max_mutants": max_mutants, "seed": seed, "complete": complete,
        "exercises": [{
            "exercise": r.exercise, "generated": r.generated, "score": r.score,
            "counts": {o.value: r.count(o) for o in Outcome},
            "duration_s": r.duration_s, "early_stop_share": r.early_stop_share,
            "problems": r.problems, "stale": [{"id": s.id, "why": s.why} for s in r.stale],
            "dropped": [{"id": d.id, "reason": d.reason} for d in r.dropped],
            "mutants": [{"id": m.mutant.id, "operator": m.mutant.operator, "line": m.mutant.line, "col": m.mutant.col,
                         "line_text": m.mutant.line_text, "outcome": m.outcome.value, "lost": m.lost,
                         "reason": m.reason, "duration_s": m.duration_s, "diff": m.mutant.diff}
                        for m in r.results],
        } for r in results],
    }
    with atomic_write(path) as f:
        f.write(json.dumps(record, indent=1) + "\n")
