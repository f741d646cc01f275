"""``grader list``: every exercise, how hard, what it is worth, and the candidate's best score so far.

On a terminal, a table that fits 80 columns (titles wrap, names never; topics, three at most, from 110 columns;
`grader show` has them all) and reads without colour: a missing best score is a dash, unknown points a question
mark, never a colour. Narrower than the table can be without breaking a word, each exercise is stacked on two
lines instead. Piped, one exercise per line, so `grader list | grep NAME` finds it.
"""

from __future__ import annotations

from pathlib import Path

import click

from grader.cli.options import exercise_root_option
from grader.untrusted import shown

#: Columns from which the table has room for topics beside the titles; narrower, `grader show` has them.
WIDE = 110


@click.command("list")
@exercise_root_option("exercises/ of the checkout around this folder, else the installed one")
def list_cmd(exercise_root):
    """List the exercises, by level, with your best score at each.

    On a terminal, a table; piped (`grader list | grep NAME`), one exercise per line with
    tab-separated fields: name, title, level, topics, points, GPU, best score.
    """
    from rich.console import Console
    from rich.text import Text

    from grader.cli.where import authoring
    from grader.practice import history
    from grader.practice.catalog import catalog

    from grader.cli.heartbeat import shown_progress
    from grader.progress import Work

    console = Console(highlight=False)
    root = authoring(exercise_root, verb="listing").exercises
    work = Work("reading exercises and their checks")
    with shown_progress(Console(stderr=True, highlight=False), work):  # stdout stays the list
        found = catalog(root, work=work)
    rows = [_cells(info, history.best_scores().get(info.name)) for info in found.exercises]
    if console.is_terminal:
        from grader.cli.tables import table_or_stacked

        table_or_stacked(console, _table(rows, with_topics=console.width >= WIDE), _stacked(rows))
        notes = console
    else:  # a pipe or a file: lines a script can grep and cut, notes apart on stderr
        for cells in rows:
            click.echo("\t".join(shown(cell, newlines=False) for cell in cells))
        notes = Console(stderr=True, highlight=False)
    if not found.exercises:
        notes.print(Text(f"No exercises under {root}."))
    for info in found.exercises:
        if not info.checks.known:
            notes.print(Text(f"{info.name}: points unknown ({info.checks.problem})"))
    for problem in found.problems:
        notes.print(Text("skipped: ", style="bold yellow") + Text(problem))
    if console.is_terminal:
        console.print(Text("Read one with: grader show NAME"))


def _cells(info, attempt) -> tuple[str, ...]:
    """One exercise's fields, in column order; a missing best score is a dash, unknown points a "?"."""
    from grader.reports.headline import fmt_points

    points = fmt_points(info.checks.points) if info.checks.known else "?"
    score = f"{fmt_points(attempt.score)}/{fmt_points(attempt.max_score)}" if attempt else "—"
    return info.name, info.title, info.level, _topics(info.topics), points, info.gpu, score


def _table(rows, *, with_topics: bool):
    """The terminal's table. A name is what the reader types next (`grader show NAME`): it never wraps;
    the title takes what is left and wraps instead, sharing it with the topics on a wide terminal only."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column("Name", no_wrap=True, min_width=max((len(r[0]) for r in rows), default=4))
    table.add_column("Title", ratio=3, overflow="fold", min_width=10)
    table.add_column("Level", no_wrap=True)
    if with_topics:
        table.add_column("Topics", ratio=2, overflow="fold")
    table.add_column("Pts", justify="right", no_wrap=True)
    table.add_column("GPU", no_wrap=True)
    table.add_column("Best", justify="right", overflow="fold")
    for cells in rows:
        shown_cells = cells if with_topics else cells[:3] + cells[4:]
        table.add_row(*(Text(cell) for cell in shown_cells))
    return table


def _stacked(rows):
    """The rows for a terminal too narrow for the table: the name and title, then the facts, indented."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.text import Text

    parts = []
    for name, title, level, _topics_cell, points, gpu, best in rows:
        parts.append(Text(name, style="bold"))  # alone on its line: never wrapped
        parts.append(Padding(Text(f"{title}\n{level} · {points} pts · GPU {gpu} · best {best}"), (0, 0, 0, 4)))
    return Group(*parts)


def _topics(topics, shown: int = 3) -> str:
    """The first few topics; a long list would make every row of the table five lines tall."""
    more = len(topics) - shown
    return ", ".join(topics[:shown]) + (f" +{more}" if more > 0 else "")
