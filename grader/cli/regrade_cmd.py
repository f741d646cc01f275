"""``grader regrade REPORT.json [SUBMISSION]`` or ``grader regrade OUTDIR``: does grading again agree?

One report: exit 0 when the whole decision agrees (score, max score, flags, findings, every check);
5 (``EXIT_MISMATCH``) when any differs, the exercise changed, the report disagrees with its own checks
or its bundle finds an edit; 2 for a bad report or the wrong file; 3 when it could not grade at all.
An output folder: one line per stored row and a summary; exit 5 when any row differs, is edited (or was
set aside as such) or its submission changed or is missing (a found difference outranks the rest),
else 3 when any row could not be regraded, else 0. Rows stored as not graded are skipped.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.cli.options import exercise_root_option, jobs_option, renamed, resolve_sandbox, sandbox_option
from grader.errors import EXIT_INFRA, EXIT_MISMATCH, UsageError
from grader.backends.oci_runtime import RUNTIMES
from grader.untrusted import shown


def _say(line: str, *, err: bool = False) -> None:
    """Echo one line that carries text from a report, a store or a folder: escaped, on one line."""
    click.echo(shown(line, newlines=False), err=err)


@click.command("regrade")
@click.argument("report_path", metavar="REPORT.json|OUTDIR", type=click.Path(path_type=Path))
@click.argument("submission", metavar="[SUBMISSION|SUBMISSIONS]", required=False, type=click.Path(path_type=Path))
@renamed("--submissions", "the second argument (grader regrade OUTDIR SUBMISSIONS)", "submission",
         type=click.Path(path_type=Path, file_okay=False))
@exercise_root_option("the installed exercises (never a folder here, nor one a report names)")
@renamed("--exercises", "--exercise-root", "exercise_root", type=click.Path(path_type=Path, file_okay=False))
@sandbox_option("docker")
@click.option("--runtime", type=click.Choice(RUNTIMES),
              help="Override the recorded OCI runtime of a Docker regrade (noted in the output). Default: the "
                   "recorded one (runc for reports that record none), never $GRADER_RUNTIME.")
@jobs_option("OUTDIR only: regradings at once")
def regrade_cmd(report_path, submission, exercise_root, sandbox, runtime, jobs):
    """Grade again under the recorded conditions and compare check by check.

    \b
    grader regrade REPORT.json [SUBMISSION]   one report; SUBMISSION defaults to the report's
                                              file beside it, or in a bundle's submission/ folder
    grader regrade OUTDIR [SUBMISSIONS]       every row of a `grader batch` output folder;
                                              SUBMISSIONS is the folder the batch graded

    The sandbox is Docker whatever a report records: a recorded local sandbox is used only
    when asked for with --sandbox local (or auto), and noted.
    """
    from grader.catalogs import grading_catalog

    catalog, elsewhere = grading_catalog(exercise_root=exercise_root)
    if elsewhere:
        _say(f"note: {elsewhere}", err=True)
    exercise_root = catalog.exercises
    sandbox = resolve_sandbox(sandbox, say=lambda note: _say(f"note: {note}", err=True))
    if Path(report_path).is_dir():
        from grader.batch.engines import default_jobs

        _regrade_folder(report_path, submission, exercise_root, sandbox, runtime, jobs or default_jobs())
        return
    if jobs is not None:
        raise UsageError("--jobs goes with an output folder, not with one REPORT.json.")
    _regrade_report(report_path, submission, exercise_root, sandbox, runtime)



def _regrade_report(report_path, submission, exercise_root, sandbox, runtime) -> None:
    from rich.console import Console

    from grader.cli.heartbeat import shown_progress
    from grader.evidence.regrade import read_report, regrade
    from grader.progress import Work

    report = read_report(report_path)  # a report edited to disagree with its own checks is refused here (exit 5)
    if report.audience == "candidate":
        raise UsageError(f"{report_path} is a candidate's copy: hidden checks' ids are hashed, so it cannot be "
                         "compared check by check.", hint="Regrade from the panel-audience report.")
    path = submission or _default_submission(report_path, report.environment.submission_name,
                                             report.environment.submission_path)
    edited = _bundle_lines(report_path)
    work = Work("regrading", total=1)
    with shown_progress(Console(stderr=True, highlight=False), work):
        work.start(report.exercise)
        result = regrade(report, path, exercise_root=exercise_root, sandbox=sandbox, runtime=runtime)
    for note in result.notes:
        _say(f"note: {note}", err=True)
    if not result.new.graded:
        _say(f"not graded: {result.new.not_graded_reason}", err=True)
        sys.exit(EXIT_INFRA)
    if result.matches and not edited:
        click.echo("every check's outcome matches, and so do the score, max score, flags and findings")
        return
    for line in edited + result.differences:
        _say(f"mismatch: {line}")
    sys.exit(EXIT_MISMATCH)


def _bundle_lines(report_path: Path) -> list[str]:
    """When the report is a bundle's: what its signature says (a note), and every edit it finds (returned)."""
    from grader.cli.bundle_cmd import seal_lines
    from grader.evidence.bundle import SIGNATURE, inspect_bundle

    folder = Path(report_path).parent
    if Path(report_path).name != "report.json" or not (folder / SIGNATURE).exists():
        return []
    verdict = inspect_bundle(folder)
    for line in seal_lines(verdict):
        _say(f"note: bundle {line}", err=True)
    return [f"bundle: {line}" for line in verdict.problems]


def _regrade_folder(out_dir, submissions, exercise_root, sandbox, runtime, jobs) -> None:
    from grader.batch.regrade import Outcome, regrade_batch

    from rich.console import Console

    from grader.cli.heartbeat import shown_progress
    from grader.progress import Work

    work = Work("regrading")
    with shown_progress(Console(stderr=True, highlight=False), work):
        result = regrade_batch(out_dir, submissions=submissions, exercise_root=exercise_root, sandbox=sandbox,
                               runtime=runtime, jobs=jobs, work=work)
    for row in result.rows:
        where = f"{row.candidate} {row.exercise}"
        if row.outcome is Outcome.MATCHES:
            _say(f"{where}: matches")
        elif row.outcome is Outcome.DIFFERS:
            for line in row.differences:
                _say(f"{where}: mismatch: {line}")
        else:
            _say(f"{where}: {row.outcome.value}: {row.problem}")
            for line in row.differences:  # an edited row is regraded too: what it would have changed
                _say(f"{where}: mismatch: {line}")
        for note in row.notes:
            _say(f"{where}: note: {note}", err=True)
    counts = ", ".join(f"{result.count(o)} {o.value.replace('_', ' ')}" for o in Outcome if result.count(o))
    click.echo(f"{len(result.rows)} stored rows: {counts or 'none'}.")
    if any(r.outcome.counts_against for r in result.rows):
        sys.exit(EXIT_MISMATCH)
    if result.count(Outcome.NOT_GRADED):
        sys.exit(EXIT_INFRA)


def _default_submission(report_path: Path, name: str, recorded: str = "") -> Path:
    """The file beside the report (or in a bundle's submission/ folder). The path the report records is
    only ever quoted, never opened: a report is data anyone can edit."""
    import shlex

    folder = Path(report_path).parent
    if Path(name).name != name or name in (".", ".."):  # a report's field is a file name, never a path
        raise UsageError(f"The report names its submission {name!r}, which is not a file name.",
                         hint="Pass the submission file as the second argument.")
    for candidate in (folder / name, folder / "submission" / name):
        if name and candidate.is_file():
            return candidate
    hint = "Pass the submission file as the second argument"
    if recorded:
        hint += (f". The report records it was graded from {recorded} (not opened by regrade; its sha256 is "
                 f"checked): grader regrade {shlex.quote(str(report_path))} {shlex.quote(recorded)}")
    raise UsageError(f"No submission named {name or '(unrecorded)'!r} beside {str(report_path)!r} "
                     "or in its submission/ folder.", hint=hint + ".")
