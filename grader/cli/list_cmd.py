"""``grader list``: every exercise, how hard, what it is worth, and the candidate's best score so far.

The table fits 80 columns (titles wrap, three topics at most; `grader show` has them all) and reads without colour: a
missing best score is a dash, unknown points a question mark, never a colour.
"""

from __future__ import annotations

from pathlib import Path

import click


@click.command("list")
@click.option("--exercise-root", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Folder holding exercise folders (default: the grader's exercises/).")
def list_cmd(exercise_root):
    """List the exercises, by level, with your best score at each."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from grader.exercise import EXERCISES_DIR
    from grader.practice import history
    from grader.practice.catalog import catalog
    from grader.reports.render import fmt_points

    console = Console(highlight=False)
    found = catalog(exercise_root or EXERCISES_DIR)
    best = history.best_scores()
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    # Short columns keep their width; title and topics share what is left and wrap.
    table.add_column("Name", overflow="fold", max_width=14)
    table.add_column("Title", ratio=3, overflow="fold")
    table.add_column("Level", no_wrap=True)
    table.add_column("Topics", ratio=2, overflow="fold")
    table.add_column("Pts", justify="right", no_wrap=True)
    table.add_column("GPU", no_wrap=True)
    table.add_column("Best", justify="right", overflow="fold")
    for info in found.exercises:
        points = fmt_points(info.checks.points) if info.checks.known else "?"
        attempt = best.get(info.name)
        score = f"{fmt_points(attempt.score)}/{fmt_points(attempt.max_score)}" if attempt else "—"
        table.add_row(*(Text(cell) for cell in (info.name, info.title, info.level, _topics(info.topics),
                                                 points, info.gpu, score)))
    console.print(table)
    if not found.exercises:
        console.print(Text(f"No exercises under {exercise_root or EXERCISES_DIR}."))
    for info in found.exercises:
        if not info.checks.known:
            console.print(Text(f"{info.name}: points unknown ({info.checks.problem})"))
    for problem in found.problems:
        console.print(Text("skipped: ", style="bold yellow") + Text(problem))
    console.print(Text("Read one with: grader show NAME"))


def _topics(topics, shown: int = 3) -> str:
    """The first few topics; a long list would make every row of the table five lines tall."""
    more = len(topics) - shown
    return ", ".join(topics[:shown]) + (f" +{more}" if more > 0 else "")
