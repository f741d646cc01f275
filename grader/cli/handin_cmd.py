"""``grader hand-in``: pack the workspace's answer as ``<candidate>/<exercise>/<file>.py``, as a batch reads it."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("hand-in", short_help="Pack this workspace's answer for the panel, as grader batch reads it.")
@click.option("--candidate", metavar="NAME", help="The name to file the answer under (default: the one the "
              "panel packed into grader.toml, else your login name).")
@click.option("-o", "--output", "out", type=click.Path(path_type=Path),
              help="The zip to write (default: <candidate>-<exercise>.zip in the workspace).")
@click.option("--force", is_flag=True, help="Replace OUTPUT if it exists.")
def hand_in_cmd(candidate, out, force):
    """Pack this workspace's answer for the panel: <candidate>/<exercise>/<file>.py, its sha256 and your
    last grading's summary, in a reproducible zip. Run it inside the workspace, with no argument.

    The panel collects every hand-in into one folder with `grader collect ZIP... --into FOLDER`
    and grades them all with `grader batch FOLDER --out results/`.
    """
    from rich.console import Console
    from rich.text import Text

    from grader.errors import UsageError
    from grader.practice.handin import hand_in
    from grader.practice.workspace import MARKER, find_workspace
    from grader.reports.headline import fmt_points

    ws = find_workspace(Path.cwd())
    if ws is None:
        raise UsageError(f"{str(Path.cwd())!r} is not inside a workspace (no {MARKER} here or above): nothing to "
                         "hand in.", hint="Run `grader hand-in` inside the folder `grader init` or the panel's "
                                          "zip made.")
    made = hand_in(ws, candidate=candidate, out=out, force=force)
    console = Console(highlight=False, soft_wrap=True)  # paths and hashes are never broken across lines
    console.print(Text(f"wrote {made.out}, for candidate {made.candidate} ({made.candidate_from}):"))
    for name in made.names:
        console.print(Text(f"  {name}"))
    console.print(Text(f"{ws.submission.name} sha256 {made.sha256}"))
    last = made.last
    if last is None:
        console.print(Text("Not graded on this machine yet: `grader submit` first shows you what the panel will "
                           "see.", style="yellow"))
    else:
        same = "this file" if last.sha256 == made.sha256 else "an earlier version of the file, not this one"
        console.print(Text(f"Last grading: {fmt_points(last.score)}/{fmt_points(last.max_score)} at {last.at}, "
                           f"of {same}."))
    console.print(Text(f"zip sha256 {made.zip_sha256}"))
    console.print(Text("Send the zip to the panel; they grade it again with `grader batch`."))
