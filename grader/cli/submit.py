"""``grader submit``: grade one file and show its scorecard.

On a candidate's laptop this is the whole loop: which exercise (from the
arguments or the workspace), which sandbox (Docker when it answers, else the
local one, said out loud), the clock if one is running, the scorecard, and the
attempt remembered for ``grader history``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.cli.options import gpus_option, runtime_option
from grader.errors import EXIT_INFRA

SANDBOXES = ("auto", "docker", "local")


@click.command()
@click.argument("exercise", required=False)
@click.argument("submission", required=False)
@click.option("--sandbox", type=click.Choice(SANDBOXES), default="auto", show_default=True,
              help="Where candidate code runs. auto: Docker when an engine and the image answer, otherwise "
                   "local, which is NOT isolated (said on the scorecard).")
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Write the JSON report here.")
@click.option("--html", "html_path", type=click.Path(path_type=Path), help="Write the HTML scorecard here.")
@click.option("--md", "md_path", type=click.Path(path_type=Path), help="Write the Markdown scorecard here.")
@gpus_option()
@click.option("--seed", type=int, help="Hypothesis seed (default: the exercise's; recorded in the report).")
@click.option("--audience", type=click.Choice(["candidate", "panel"]), default="candidate", show_default=True,
              help="candidate: hidden checks show name, points and status only (the JSON too); panel: everything.")
@click.option("--no-history", is_flag=True, help="Do not remember this attempt in `grader history`.")
@runtime_option("Recorded in the report.")
@click.option("--bundle", "bundle_dir", type=click.Path(path_type=Path),
              help="Also write a grading bundle (submission, full report, output, environment, SHA256SUMS) here.")
def submit(exercise, submission, sandbox, json_path, html_path, md_path, gpus, seed, audience, no_history, runtime,
           bundle_dir):
    """Grade SUBMISSION against EXERCISE and show the scorecard.

    \b
    grader submit                 inside a workspace (`grader init`): its exercise, its file
    grader submit FILE            a file inside a workspace
    grader submit NAME            that exercise: the workspace's file, or the exercise's own stub
    grader submit NAME FILE       any file (or a folder holding it)
    """
    from rich.console import Console
    from rich.text import Text

    from grader.grading import grade
    from grader.practice import clock
    from grader.practice.target import resolve_target
    from grader.reports.render import check_report_paths, write_reports
    from grader.reports.terminal import render_terminal
    from grader.sandbox.choice import choose_sandbox
    from grader.sandbox.flavor import flavor_for
    from grader.sandbox.gpu import plan_gpus

    check_report_paths(json_path=json_path, html_path=html_path, md_path=md_path)  # fail before grading
    if bundle_dir is not None:
        from grader.evidence.bundle import check_bundle_dest

        check_bundle_dest(bundle_dir)
    target = resolve_target(exercise, submission, cwd=Path.cwd())
    console, err = Console(), Console(stderr=True, highlight=False)
    timing = clock.timing_for(target.exercise.name)  # submitted now: the grading's own time does not count
    choice = choose_sandbox(sandbox, flavor=flavor_for(plan_gpus(target.exercise.config.exercise.gpu, gpus).request))
    if choice.note:
        err.print(Text.assemble(("note: ", "bold yellow"), choice.note))
    if choice.kind == "docker":
        from grader.cli.leftovers import reap_leftovers

        reap_leftovers(err)
    report = grade(target.exercise, target.submission, sandbox=choice, gpus=gpus, seed=seed, runtime=runtime)
    report.timing = timing
    render_terminal(report, console, audience=audience)
    write_reports(report, json_path=json_path, html_path=html_path, md_path=md_path, audience=audience)
    if bundle_dir is not None:
        from grader.evidence.bundle import write_bundle
        from grader.exercise import resolve_submission

        write_bundle(report, resolve_submission(target.exercise, target.submission), bundle_dir)
    if not no_history:
        _remember(report, console)
    if not report.graded:
        sys.exit(EXIT_INFRA)


def _remember(report, console) -> None:
    """Store the attempt and say what changed since the last one (names only: fine for hidden checks)."""
    from rich.text import Text

    from grader.practice import history

    before = history.attempts(report.exercise)
    attempt = history.record(report)
    if attempt is None or not before:
        return
    changed = history.flips(before[-1], attempt)
    parts = []
    if changed.fixed:
        parts.append(f"fixed {len(changed.fixed)}: {', '.join(changed.fixed)}")
    if changed.broke:
        parts.append(f"broke {len(changed.broke)}: {', '.join(changed.broke)}")
    line = "Since your last attempt: " + ("; ".join(parts) if parts else "no check changed")
    if changed.exercise_changed:
        line += " (the exercise changed in between)"
    console.print(Text(line, style="dim"), width=min(console.width, 100))
