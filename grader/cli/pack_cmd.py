"""``grader pack EXERCISE [-o FILE.zip]``: what a hiring panel hands a candidate, with its sha256."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("pack")
@click.argument("exercise")
@click.option("-o", "--output", "out", type=click.Path(path_type=Path),
              help="The zip to write (default: EXERCISE.zip in this folder).")
@click.option("--force", is_flag=True, help="Replace OUTPUT if it exists.")
def pack(exercise, out, force):
    """Zip EXERCISE's prompt, stub and public examples: no checks, probes, solutions or mutants."""
    import hashlib

    from rich.console import Console
    from rich.text import Text

    from grader.exercise import load_exercise
    from grader.practice.pack import pack_exercise

    ex = load_exercise(exercise)
    out = out or Path(f"{ex.name}.zip")
    names = pack_exercise(ex, out, force=force)
    console = Console(highlight=False, soft_wrap=True)  # paths are never broken across lines
    console.print(Text(f"wrote {out}:"))
    for name in names:
        console.print(Text(f"  {name}"))
    console.print(Text(f"sha256 {hashlib.sha256(out.read_bytes()).hexdigest()}"))
