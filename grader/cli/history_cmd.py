"""``grader history [NAME]``: past attempts, what each scored, and which checks flipped since the one before.

Oldest first, like a log: each row's "changes" compares it with a row above it,
and the newest attempt and the best scores end up last, just above the prompt,
where a candidate reads without scrolling back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # imported where used, so `grader --help` stays quick
    from rich.table import Table
    from rich.text import Text

    from grader.practice.history import Attempt


def score_text(a: Attempt) -> str:
    from grader.reports.headline import fmt_points

    return f"{fmt_points(a.score)}/{fmt_points(a.max_score)}"


def time_text(a: Attempt) -> str:
    """Elapsed time of a timed attempt and, on a line of its own, "LATE" in words; empty for an untimed one."""
    from grader.reports.headline import fmt_duration

    if a.elapsed_s is None:
        return ""
    return fmt_duration(a.elapsed_s) + ("\nLATE" if a.over_limit else "")


def changes_text(before: Attempt | None, after: Attempt) -> str:
    """Against the previous attempt at the same exercise: the counts, then one flipped check per line."""
    from grader.practice import history

    if before is None:
        return "first attempt"
    f = history.flips(before, after)
    return "\n".join([f.counts(), *f.lines()])


def history_rows(attempts: list[Attempt]) -> list[dict[str, str]]:
    """One row per attempt, field by field; ``#`` counts attempts at that exercise ("#3": the third try at it)."""
    from grader.practice.clock import fmt_local

    rows, previous, counts = [], {}, {}
    for a in attempts:
        counts[a.exercise] = counts.get(a.exercise, 0) + 1
        rows.append({"#": str(counts[a.exercise]), "When": fmt_local(a.at), "Exercise": a.exercise,
                     "Score": score_text(a), "Time": time_text(a), "Changes": changes_text(previous.get(a.exercise), a)})
        previous[a.exercise] = a
    return rows


def history_table(attempts: list[Attempt], *, show_exercise: bool) -> Table:
    """The table: names never wrap, the changes wrap at spaces; the time column only when an attempt was timed."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    rows = history_rows(attempts)
    timed = any(r["Time"] for r in rows)
    table = Table(box=box.SIMPLE_HEAD, expand=True, pad_edge=False)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("When", no_wrap=True)
    if show_exercise:
        table.add_column("Exercise", no_wrap=True)
    table.add_column("Score", justify="right", no_wrap=True)
    if timed:
        table.add_column("Time", no_wrap=True)
    table.add_column("Changes")
    for r in rows:
        cells = [r["#"], r["When"], *([r["Exercise"]] if show_exercise else []), r["Score"],
                 *([r["Time"]] if timed else []), r["Changes"]]
        table.add_row(*(Text(c) for c in cells))  # names are data, never rich markup
    return table


def history_stacked(attempts: list[Attempt], *, show_exercise: bool):
    """The same rows for a narrow terminal: a heading line per attempt, its changes indented below it."""
    from rich.console import Group
    from rich.text import Text

    from rich.padding import Padding

    parts = []
    for r in history_rows(attempts):
        head = [f"#{r['#']}", *([r["Exercise"]] if show_exercise else []), r["Score"], r["When"],
                *([r["Time"].replace(chr(10), " ")] if r["Time"] else [])]
        parts.append(Text(" · ".join(head), style="bold"))
        parts.append(Padding(Text(r["Changes"]), (0, 0, 0, 3)))  # wrapped lines keep the indent
    return Group(*parts, "")


def best_lines(attempts: list[Attempt]) -> list[Text]:
    """The best score per exercise, with which attempt reached it first."""
    from rich.text import Text

    from grader.practice import history
    from grader.practice.clock import fmt_local

    best = history.best_scores()
    numbers = {}
    for a in attempts:
        numbers.setdefault(a.exercise, []).append(a.id)
    lines = [Text("Best scores", style="bold")]
    for name in sorted(numbers):
        b = best[name]
        lines.append(Text(f"  {name}: {score_text(b)} (attempt #{numbers[name].index(b.id) + 1}, "
                          f"{fmt_local(b.at)})", overflow="fold"))
    return lines


@click.command("history")
@click.argument("name", required=False)
def history_cmd(name):
    """Show past graded attempts (at exercise NAME, or at all), oldest first.

    Each row says what changed since the previous attempt at the same exercise:
    which checks were fixed and which broke.
    """
    from rich.console import Console
    from rich.text import Text

    from grader.practice import history

    console = Console(highlight=False)
    attempts = history.attempts(name)
    if name is not None and not attempts:
        _require_known(name, history)
    if not attempts:
        target = f"exercise {name!r}" if name else "any exercise"
        console.print(Text(f"No graded attempts at {target} yet. Run `grader submit {name or 'NAME'}` "
                           "to grade one: every graded attempt is remembered here."))
        others = sorted({a.exercise for a in history.attempts()}) if name else []
        if others:
            console.print(Text(f"Exercises with attempts: {', '.join(others)}."))
        return
    from grader.cli.tables import table_or_stacked

    table_or_stacked(console, history_table(attempts, show_exercise=name is None),
                     history_stacked(attempts, show_exercise=name is None))
    for line in best_lines(attempts):
        console.print(line)


def _require_known(name: str, history) -> None:
    """A name that is neither an exercise nor in the history is a typo: a usage error, not "no attempts yet"."""
    from grader.exercise import known_names
    from grader.unknown_exercise import UnknownExercise

    known = set(known_names()) | {a.exercise for a in history.attempts()}
    if name not in known:
        raise UnknownExercise(name, known)
