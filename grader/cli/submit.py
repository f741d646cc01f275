"""``grader submit``: grade one file and show its scorecard.

On a candidate's laptop this is the whole loop: which exercise (from the
arguments or the workspace), which sandbox (Docker when it answers, else the
local one, said out loud), the clock if one is running, the scorecard, and the
attempt remembered for ``grader history``.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import click

from grader.cli.options import exercise_root_option, gpus_option, json_option, runtime_option, sandbox_option
from grader.errors import EXIT_INFRA, UsageError

@click.command()
@click.argument("exercise", required=False)
@click.argument("submission", required=False)
@exercise_root_option("the installed exercises (never a folder here; inside another checkout, a note says how "
                      "to use it)")
@sandbox_option("auto")
@json_option("Write the JSON report here (all its data; --audience decides what a candidate's copy holds).")
@click.option("--html", "html_path", type=click.Path(path_type=Path), help="Write the HTML scorecard here.")
@click.option("--md", "md_path", type=click.Path(path_type=Path), help="Write the Markdown scorecard here.")
@gpus_option()
@click.option("--seed", type=int, help="Hypothesis seed (default: the exercise's; recorded in the report).")
@click.option("--audience", type=click.Choice(["candidate", "panel"]), default="candidate", show_default=True,
              help="candidate: hidden checks show name, points and status only (the JSON too); panel: everything.")
@click.option("--no-history", is_flag=True, help="Do not remember this attempt in `grader history`.")
@runtime_option("Recorded in the report.")
@click.option("--bundle", "bundle_dir", type=click.Path(path_type=Path),
              help="Also write a grading bundle (submission, full report, output, environment, SHA256SUMS, "
                   "SIGNATURE made with your signing key: `grader key`) here.")
def submit(exercise, submission, exercise_root, sandbox, json_path, html_path, md_path, gpus, seed, audience,
           no_history, runtime, bundle_dir):
    """Grade SUBMISSION against EXERCISE and show the scorecard.

    \b
    grader submit                 inside a workspace (`grader init`): its exercise, its file
    grader submit FILE            a file inside a workspace
    grader submit NAME            that exercise: the workspace's file, or the exercise's own stub
    grader submit NAME FILE       any file (or a folder holding it)

    The exercise comes from the installed catalog by name (or from --exercise-root), never
    from a folder here. A file that does not parse, and the untouched stub, are answered at
    once, without a sandbox.
    """
    from rich.console import Console
    from rich.text import Text

    from grader.catalogs import grading_catalog
    from grader.cli.submit_progress import check_progress
    from grader.exercise import resolve_submission
    from grader.host.grading import answered_alone, grade, read_submission
    from grader.practice import clock
    from grader.practice.target import resolve_target, untouched_stub_note
    from grader.reports.render import check_report_paths, write_reports
    from grader.reports.terminal import render_terminal

    check_report_paths(json_path=json_path, html_path=html_path, md_path=md_path)  # fail before grading
    if bundle_dir is not None:
        from grader.evidence.bundle import check_bundle_dest

        check_bundle_dest(bundle_dir)
    cwd = Path.cwd()
    console, err = Console(), Console(stderr=True, highlight=False, soft_wrap=True)
    catalog, elsewhere = grading_catalog(cwd, exercise_root=exercise_root)
    try:
        target = resolve_target(exercise, submission, cwd=cwd, catalog=catalog)
    except UsageError as e:
        if elsewhere:  # the likely cause: the exercise is in the checkout around this folder
            e.hint = f"{e.hint} Note: {elsewhere}." if e.hint else f"Note: {elsewhere}."
        raise
    ex = target.exercise
    path = resolve_submission(ex, target.submission)
    source = read_submission(path)
    given_as = target.given or _as_typed(path, cwd)
    stub_note = untouched_stub_note(target, hashlib.sha256(source).hexdigest(), cwd=cwd, given_as=given_as)
    if stub_note:  # before anything else: nothing below is about the candidate's work
        err.print(Text.assemble(("note: ", "bold yellow"), stub_note))
    for note in ([elsewhere] if elsewhere else []) + target.notes:
        err.print(Text.assemble(("note: ", "bold yellow"), note))
    timing = clock.timing_for(ex.name)  # submitted now: the grading's own time does not count
    if not answered_alone(ex, source, given_as=given_as):
        choice = _sandbox(sandbox, ex, gpus, err)
    else:
        choice = sandbox  # the judge answers alone: no sandbox to choose, no engine to ask
    with check_progress(err, audience=audience) as on_event:  # on a terminal only; gone before the scorecard
        report = grade(ex, path, sandbox=choice, gpus=gpus, seed=seed, runtime=runtime, on_event=on_event,
                       given_as=given_as)
    report = report.model_copy(update={"timing": timing})
    render_terminal(report, console, audience=audience)
    write_reports(report, json_path=json_path, html_path=html_path, md_path=md_path, audience=audience)
    if bundle_dir is not None:
        from grader.evidence.bundle import write_bundle

        write_bundle(report, path, bundle_dir)
    if not no_history and not report.untouched_stub:  # the stub's 0 is not the candidate's attempt
        _remember(report, console)
    if not report.graded:
        sys.exit(EXIT_INFRA)


def _sandbox(kind: str, ex, gpus, err):
    """The sandbox for a real grading, chosen once so its note comes before the progress line."""
    from rich.text import Text

    from grader.backends.choice import choose_sandbox
    from grader.backends.gpu import gpu_request

    request, _ = gpu_request(ex.config.exercise.gpu, gpus)  # a required exercise without --gpus: exit 2
    choice = choose_sandbox(kind, gpu=request)  # GPUs with auto: Docker's CUDA image, or not graded (exit 3)
    if choice.note:
        err.print(Text.assemble(("note: ", "bold yellow"), choice.note))
    if choice.kind == "docker":
        from grader.cli.leftovers import reap_leftovers

        reap_leftovers(err)
    return choice


def _as_typed(path: Path, cwd: Path) -> str:
    """How a user would name ``path`` from ``cwd``: relative below it (``attention.py`` in a workspace)."""
    try:
        return str(path.resolve().relative_to(cwd.resolve()))
    except (OSError, ValueError):
        return str(path)


def _remember(report, console) -> None:
    """Store the attempt and say what changed since the last one (names only: fine for hidden checks)."""
    from rich.text import Text

    from grader.practice import history

    before = history.attempts(report.exercise)
    attempt = history.record(report)
    if attempt is None or not before:
        return
    changed = history.flips(before[-1], attempt)
    for line in [f"Since your last attempt: {changed.counts()}", *(f"  {line}" for line in changed.lines())]:
        console.print(Text(line, style="dim"), width=min(console.width, 100))
