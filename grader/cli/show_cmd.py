"""``grader show NAME``: an exercise's prompt in the terminal, with what it is worth and what to edit."""

from __future__ import annotations

import click

from grader.cli.options import exercise_root_option


@click.command("show")
@click.argument("name")
@exercise_root_option("exercises/ of the checkout around this folder, else the installed one")
def show(name, exercise_root):
    """Show exercise NAME: its facts, then its README."""
    from rich.console import Console
    from rich.markdown import Markdown
    from rich.rule import Rule
    from rich.text import Text

    from grader.cli.where import authoring
    from grader.practice.catalog import describe

    ex = authoring(exercise_root, verb="showing from").resolve(name)
    info = describe(ex)
    console = Console(highlight=False)
    console.print(Text(info.title, style="bold"))
    for label, value in [("Exercise", info.name), ("Level", info.level),
                         ("Topics", ", ".join(info.topics) or "—"), ("File to edit", info.submission),
                         ("GPU", info.gpu), ("Checks", info.checks.summary())]:
        console.print(Text(f"{label + ':':<14}", style="bold") + Text(value))
    console.print(Rule())
    readme = ex.readme.read_text(encoding="utf-8") if ex.readme.is_file() else "(This exercise has no README.md.)"
    console.print(Markdown(readme))  # the author's prompt: rich renders Markdown, it does not parse [markup]
    console.print(Rule())
    console.print(Text(f"Start with: grader init {info.name}"))
