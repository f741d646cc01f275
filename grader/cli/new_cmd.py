"""``grader new NAME``: scaffold an exercise that validates out of the box (AUTHORING.md takes it from there)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("new")
@click.argument("name")
@click.option("--exercises", "exercises_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write <NAME>/ into (default: the repository's exercises/).")
@click.option("--solutions", "solutions_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write the reference, variant and mutant into (default: solutions/).")
def new(name, exercises_dir, solutions_dir):
    """Scaffold exercise NAME: a prompt, stub, probes, one check, one example, a reference, a variant and a mutant.

    The template (scale a tensor) validates as written; replace its contract with
    yours, step by step, as AUTHORING.md describes. Never overwrites: an existing
    exercise or solutions folder of that name is refused (exit 2).
    """
    from rich.console import Console
    from rich.text import Text

    from grader.corpus import SOLUTIONS_DIR
    from grader.exercise import EXERCISES_DIR
    from grader.scaffold import new_exercise

    made = new_exercise(name, exercises_dir or EXERCISES_DIR, solutions_dir or SOLUTIONS_DIR)
    console = Console(highlight=False, soft_wrap=True)
    for path in made.files:
        console.print(Text(f"wrote {path}"))
    validate = ["grader", "validate", name if exercises_dir is None else str(made.exercise_dir),
                "--sandbox", "local"] + ([] if solutions_dir is None else ["--solutions", str(made.solutions_dir.parent)])
    console.print(Text("\nNext:", style="bold"))
    for step in [" ".join(validate) + "   # reference and variant full marks, stub 0, the mutant caught",
                 f"then replace the contract in {made.exercise_dir / 'README.md'}, following AUTHORING.md"]:
        console.print(Text(f"  {step}"))
