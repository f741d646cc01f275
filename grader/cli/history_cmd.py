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
    from grader.reports.render import fmt_points

    return f"{fmt_points(a.score)}/{fmt_points(a.max_score)}"


def time_text(a: Attempt) -> str:
    """Elapsed time of a timed attempt and, on a line of its own, "LATE" in words; empty for an untimed one."""
    from grader.reports.render import fmt_duration

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


def history_table(attempts: list[Attempt], *, show_exercise: bool) -> Table:
    """One row per attempt; ``#`` counts attempts at that exercise (so "#3" is the third try at it)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from grader.practice.clock import fmt_local

    table = Table(box=box.SIMPLE_HEAD, expand=True, pad_edge=False)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("When", no_wrap=True)
    if show_exercise:
        table.add_column("Exercise", overflow="fold", max_width=14)
    table.add_column("Score", justify="right", no_wrap=True)
    table.add_column("Time", max_width=11)
    table.add_column("Changes", ratio=1, overflow="fold")
    previous: dict[str, Attempt] = {}
    counts: dict[str, int] = {}
    for a in attempts:
        counts[a.exercise] = counts.get(a.exercise, 0) + 1
        cells = [str(counts[a.exercise]), fmt_local(a.at)]
        if show_exercise:
            cells.append(a.exercise)
        cells += [score_text(a), time_text(a), changes_text(previous.get(a.exercise), a)]
        table.add_row(*(Text(c) for c in cells))  # names are data, never rich markup
        previous[a.exercise] = a
    return table


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
    console.print(history_table(attempts, show_exercise=name is None))
    for line in best_lines(attempts):
        console.print(line)


def _require_known(name: str, history) -> None:
    """A name that is neither an exercise nor in the history is a typo: a usage error, not "no attempts yet"."""
    from grader.exercise import known_names
    from grader.unknown_exercise import UnknownExercise

    known = set(known_names()) | {a.exercise for a in history.attempts()}
    if name not in known:
        raise UnknownExercise(name, known)
