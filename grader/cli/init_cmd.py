"""``grader init NAME [DIR]``: a workspace with the prompt, the stub and the example tests."""

from __future__ import annotations

from pathlib import Path

import click

from grader.cli.options import exercise_root_option


@click.command("init")
@click.argument("name")
@click.argument("dest", required=False, type=click.Path(path_type=Path))
@exercise_root_option("exercises/ of the checkout around this folder, else the installed one")
@click.option("--force", is_flag=True, help="Replace files that differ (each old one is kept as NAME.bak).")
def init(name, dest, exercise_root, force):
    """Make a workspace for exercise NAME in DEST (default: ./NAME). Never overwrites without --force."""
    import shlex

    from rich.console import Console
    from rich.text import Text

    from grader.cli.where import authoring
    from grader.practice.workspace import init_workspace

    catalog = authoring(exercise_root, verb="making a workspace from")
    ex = catalog.resolve(name)
    dest = dest or Path(ex.name)
    result = init_workspace(ex, dest, force=force)
    console = Console(highlight=False, soft_wrap=True)  # paths are never broken across lines
    for path in result.written:
        backup = result.backups.get(path)
        console.print(Text(f"wrote     {path}" + (f" (your old file is now {backup.name})" if backup else "")))
    for path in result.unchanged:
        console.print(Text(f"unchanged {path}"))
    submission = ex.config.exercise.submission
    console.print(Text("\nNext:", style="bold"))
    for step in [f"cd {shlex.quote(str(dest))}", f"edit {submission}",
                 "pytest          # runs the public examples (the graded checks are hidden)",
                 _submit_step(catalog) + f"   # grades {submission}"]:
        console.print(Text(f"  {step}"))


def _submit_step(catalog) -> str:
    """``grader submit``, naming the catalog when it is not the installed one: grading never takes it from here."""
    import shlex

    if catalog.origin == "installed":
        return "grader submit"
    return f"grader submit --exercise-root {shlex.quote(str(catalog.exercises))}"
