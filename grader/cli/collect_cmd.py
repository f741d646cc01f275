"""``grader collect ZIP... --into DIR``: hand-in zips into a submissions folder, each into its own candidate's only."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command("collect", short_help="Unpack hand-in zips into a submissions folder, each into its own candidate's.")
@click.argument("zips", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--into", "into", required=True, type=click.Path(path_type=Path, file_okay=False),
              help="The submissions folder (created if absent) that `grader batch` then grades.")
def collect_cmd(zips, into):
    """Collect the zips `grader hand-in` wrote into INTO/<candidate>/<exercise>/.

    Each zip fills only the folder its HANDIN.toml names (and the zip's name must start with
    <candidate>-<exercise>); any entry outside it is refused and reported. The file's sha256 is
    checked against HANDIN.toml. Nothing is overwritten silently: every hand-in is kept under
    <candidate>/<exercise>/handins/, and the newest is the one graded. Exits 2 when a zip or an
    entry was refused (the rest is collected).
    """
    from rich.console import Console
    from rich.text import Text

    from grader.batch.collect import collect
    from grader.errors import EXIT_USAGE
    from grader.untrusted import shown

    console = Console(highlight=False, soft_wrap=True)
    results = collect(list(zips), into)
    trouble = False
    for r in results:
        name = shown(str(r.zip), newlines=False)
        if r.refused is not None:
            trouble = True
            console.print(Text(f"refused {name}: {r.refused}; nothing of it was collected", style="bold red"))
            continue
        where = f"{r.candidate}/{r.exercise}/"
        if r.already:
            console.print(Text(f"{name}: already collected into {where} (the same zip); nothing written"))
        else:
            checked = ("sha256 matches its HANDIN.toml" if r.sha256_checked else
                       "sha256 DIFFERS from its HANDIN.toml (recorded; the panel page says so)")
            console.print(Text(f"{name} -> {where} ({checked})", style="" if r.sha256_checked else "yellow"))
            if r.earlier:
                console.print(Text(f"  hand-in {r.earlier + 1} from {r.candidate} for {r.exercise}: kept beside the "
                                   f"earlier one(s) in {where}handins/; this newest one is the one graded",
                                   style="yellow"))
        for entry in r.refused_entries:
            trouble = True
            console.print(Text(f"  refused entry {entry}", style="red"))
    console.print(Text(f"Grade them with `grader batch {shown(str(into), newlines=False)} --out results/`."))
    if trouble:
        sys.exit(EXIT_USAGE)
