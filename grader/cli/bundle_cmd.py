"""``grader bundle verify DIR``: confirm an archived grading bundle was not edited (exit 5 if it was)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.errors import EXIT_MISMATCH


@click.group("bundle")
def bundle() -> None:
    """Grading bundles: a submission, its report, output and environment, with SHA256SUMS."""


@bundle.command("verify")
@click.argument("folder", type=click.Path(path_type=Path))
def verify(folder):
    """Check every file in FOLDER against its SHA256SUMS; list what changed, is missing or was added."""
    from grader.evidence.bundle import verify_bundle

    problems = verify_bundle(folder)
    if not problems:
        click.echo(f"bundle intact: every file matches {folder / 'SHA256SUMS'}")
        return
    for line in problems:
        click.echo(f"edited: {line}")
    sys.exit(EXIT_MISMATCH)
