"""``grader bundle verify DIR``: is an archived grading bundle the one the panel's grader signed?

One of three answers: **signed and intact** (exit 0): the signature, made with this
machine's key, covers every file and nothing disagrees; **edited** (exit 5): each
line names the file (and, for report.json, the field) that changed; or, with nothing
found edited, **unsigned** / **not signed by this key** (exit 6): the sums and the
parts agree, but no signature this machine can check vouches for them, so a careful
forgery would not show.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.errors import EXIT_MISMATCH, EXIT_UNCONFIRMED
from grader.untrusted import shown


@click.group("bundle")
def bundle() -> None:
    """Grading bundles: a submission, its report, output and environment, with SHA256SUMS and a SIGNATURE."""


@bundle.command("verify")
@click.argument("folder", type=click.Path(path_type=Path))
def verify(folder):
    """Check FOLDER's signature (made with the panel's key), every file against SHA256SUMS, and the
    submission, environment.json, output.txt and the score against report.json and its checks.

    Exit 0 signed and intact, 5 edited (each line names what changed), 6 nothing found edited but not
    signed with this machine's key.
    """
    from grader.evidence.bundle import inspect_bundle

    verdict = inspect_bundle(folder)
    for line in verdict.problems:  # they name files of the bundle and lines of its sums file: escaped
        _say(f"edited: {line}")
    for line in seal_lines(verdict):
        _say(line)
    if verdict.problems:
        sys.exit(EXIT_MISMATCH)
    if not verdict.intact:
        sys.exit(EXIT_UNCONFIRMED)


def seal_lines(verdict) -> list[str]:
    """What the signature says, in words (nothing when edits were found under this machine's own key)."""
    from grader.evidence.signing import ENV_VAR, Seal, key_path

    mine = f"this machine's key is {verdict.key.id}" if verdict.key else f"this machine has no key ({key_path()})"
    if verdict.seal is Seal.SIGNED:
        return [f"signed and intact: signed with this machine's key {verdict.key.id}; every file matches the "
                "signature and SHA256SUMS, and report.json agrees with its checks and the other parts"]
    if verdict.seal is Seal.EDITED:
        return [] if verdict.problems else ["edited: the signature does not match"]
    if verdict.seal is Seal.UNSIGNED:
        return ["unsigned: the bundle has no SIGNATURE. It was made before bundles were signed, or by someone "
                "without a key, or its signature was removed: which, cannot be told. The sums and parts "
                "agree, but a careful forgery would too; `grader regrade` settles the score"]
    return [f"not signed by this key: the signature names key {verdict.signed_by}, {mine}. It was signed on "
            "another panel member's machine with another key, or edited and signed again: which, cannot be "
            f"told here. Check it where that key is, or share one key (docs/evidence.md; ${ENV_VAR})"]


def _say(line: str) -> None:
    click.echo(shown(line, newlines=False))
