"""``grader regrade REPORT.json [SUBMISSION]``: does grading again give every check the same outcome?

Exit 0 when it does, 5 (``EXIT_MISMATCH``) when any check differs or the
exercise changed since, 2 for a bad report or the wrong file, 3 when the
regrade could not grade at all.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.errors import EXIT_INFRA, EXIT_MISMATCH, UsageError


@click.command("regrade")
@click.argument("report_path", metavar="REPORT.json", type=click.Path(path_type=Path))
@click.argument("submission", required=False, type=click.Path(path_type=Path))
@click.option("--exercises", "exercise_root", type=click.Path(path_type=Path, file_okay=False),
              help="Folder holding exercise folders by name (default: the repository's exercises/).")
@click.option("--sandbox", type=click.Choice(["docker", "local"]),
              help="Override the recorded sandbox kind (noted in the output).")
def regrade_cmd(report_path, submission, exercise_root, sandbox):
    """Grade SUBMISSION again under the conditions REPORT.json recorded and compare check by check.

    SUBMISSION defaults to the report's submission file beside it, or in a bundle's submission/ folder.
    """
    from grader.evidence.regrade import read_report, regrade

    report = read_report(report_path)
    if report.audience == "candidate":
        raise UsageError(f"{report_path} is a candidate's copy: hidden checks' ids are hashed, so it cannot be "
                         "compared check by check.", hint="Regrade from the panel-audience report.")
    path = submission or _default_submission(report_path, report.environment.submission_name)
    result = regrade(report, path, exercise_root=exercise_root, sandbox=sandbox)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if not result.new.graded:
        click.echo(f"not graded: {result.new.not_graded_reason}", err=True)
        sys.exit(EXIT_INFRA)
    if result.matches:
        click.echo("every check's outcome matches")
        return
    for line in result.differences:
        click.echo(f"mismatch: {line}")
    sys.exit(EXIT_MISMATCH)


def _default_submission(report_path: Path, name: str) -> Path:
    folder = Path(report_path).parent
    for candidate in (folder / name, folder / "submission" / name):
        if name and candidate.is_file():
            return candidate
    raise UsageError(f"No submission named {name or '(unrecorded)'!r} beside {str(report_path)!r} "
                     "or in its submission/ folder.", hint="Pass the submission file as the second argument.")
