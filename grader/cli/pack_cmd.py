"""``grader pack EXERCISE [-o FILE.zip]``: what a hiring panel hands a candidate, with its sha256."""

from __future__ import annotations

from pathlib import Path

import click

from grader.cli.options import exercise_root_option


@click.command("pack")
@click.argument("exercise")
@click.option("-o", "--output", "out", type=click.Path(path_type=Path),
              help="The zip to write (default: EXERCISE.zip in this folder).")
@click.option("--force", is_flag=True, help="Replace OUTPUT if it exists.")
@click.option("--candidate", metavar="NAME", help="Who it is for: recorded in the workspace, so that "
              "`grader hand-in` files their answer under this name (the folder name a batch reads).")
@exercise_root_option("exercises/ of the checkout around this folder, else the installed one")
def pack(exercise, out, force, candidate, exercise_root):
    """Zip EXERCISE's prompt, stub and public examples: no checks, probes, solutions or mutants."""
    import hashlib

    from rich.console import Console
    from rich.text import Text

    from grader.cli.where import authoring
    from grader.practice.handin import check_candidate_name
    from grader.practice.pack import pack_exercise

    ex = authoring(exercise_root, verb="packing from").resolve(exercise)
    if candidate is not None:
        check_candidate_name(candidate)
    out = out or Path(f"{ex.name}.zip")
    names = pack_exercise(ex, out, force=force, candidate=candidate)
    console = Console(highlight=False, soft_wrap=True)  # paths are never broken across lines
    console.print(Text(f"wrote {out}:"))
    for name in names:
        console.print(Text(f"  {name}"))
    console.print(Text(f"sha256 {hashlib.sha256(out.read_bytes()).hexdigest()}"))
