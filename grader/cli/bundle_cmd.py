"""``grader bundle verify DIR``: confirm an archived grading bundle was not edited (exit 5 if it was).

Both the sums and the parts' agreement with report.json are checked, so an edit
whose author also regenerated SHA256SUMS is still found.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.errors import EXIT_MISMATCH
from grader.untrusted import shown


@click.group("bundle")
def bundle() -> None:
    """Grading bundles: a submission, its report, output and environment, with SHA256SUMS."""


@bundle.command("verify")
@click.argument("folder", type=click.Path(path_type=Path))
def verify(folder):
    """Check every file in FOLDER against its SHA256SUMS, and the submission, environment.json and
    output.txt against report.json; list what changed, is missing, was added or disagrees."""
    from grader.evidence.bundle import verify_bundle

    problems = verify_bundle(folder)
    if not problems:
        click.echo(shown(f"bundle intact: every file matches {folder / 'SHA256SUMS'}", newlines=False))
        return
    for line in problems:  # they name files of the bundle and lines of its sums file: escaped
        click.echo(shown(f"edited: {line}", newlines=False))
    sys.exit(EXIT_MISMATCH)
