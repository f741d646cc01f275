"""``grader new NAME``: scaffold an exercise that validates out of the box (AUTHORING.md takes it from there)."""

from __future__ import annotations

import click

from grader.cli.options import exercise_root_option, renamed, solutions_root_option


@click.command("new")
@click.argument("name")
@exercise_root_option("exercises/ of the checkout around this folder, else the installed one")
@solutions_root_option()
@renamed("--exercises", "--exercise-root", "exercise_root", type=click.Path(file_okay=False))
@renamed("--solutions", "--solutions-root", "solutions_root", type=click.Path(file_okay=False))
def new(name, exercise_root, solutions_root):
    """Scaffold exercise NAME: a prompt, stub, probes, checks, an example, a reference, variants and mutants.

    It writes into the checkout around this folder (a folder with exercises/ and solutions/
    beside a pyproject.toml naming grader), else into the installed one, and says which.
    The template (scale a tensor) follows every authoring rule and validates as written; replace its contract with
    yours, step by step, as AUTHORING.md describes. Never overwrites: an existing
    exercise or solutions folder of that name is refused (exit 2).
    """
    import shlex
    from pathlib import Path

    from rich.console import Console
    from rich.text import Text

    from grader.catalogs import authoring_catalog
    from grader.scaffold import new_exercise

    catalog = authoring_catalog(Path.cwd(), exercise_root=exercise_root, solutions_root=solutions_root, new=True)
    console = Console(highlight=False, soft_wrap=True)
    console.print(Text(f"writing into {catalog.describe()}, solutions in {catalog.solutions}"))
    made = new_exercise(name, catalog.exercises, catalog.solutions)
    for path in made.files:
        console.print(Text(f"wrote {path}"))
    roots = ([] if exercise_root is None else ["--exercise-root", str(catalog.exercises)]) + (
        [] if solutions_root is None else ["--solutions-root", str(catalog.solutions)])
    validate = ["grader", "validate", name, "--sandbox", "local", *roots]
    console.print(Text("\nNext:", style="bold"))
    for step in [shlex.join(validate) + "   # the authoring rules; reference and variants full marks, stub 0, "
                 "every mutant caught",
                 f"then replace the contract in {made.exercise_dir / 'README.md'}, following AUTHORING.md"]:
        console.print(Text(f"  {step}"))
