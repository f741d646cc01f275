"""``grader submit``: grade one file and show its scorecard."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.errors import EXIT_INFRA
from grader.sandbox.factory import KINDS


@click.command()
@click.argument("exercise")
@click.argument("submission", required=False, type=click.Path(path_type=Path))
@click.option("--sandbox", type=click.Choice([k for k in KINDS if k != "inprocess"]), default="docker",
              show_default=True, help="Where candidate code runs. 'local' is NOT isolated.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Write the JSON report here.")
@click.option("--html", "html_path", type=click.Path(path_type=Path), help="Write the HTML scorecard here.")
@click.option("--md", "md_path", type=click.Path(path_type=Path), help="Write the Markdown scorecard here.")
@click.option("--gpus", help="GPU request for the sandbox: all, a count, or device=0,1.")
@click.option("--seed", type=int, help="Hypothesis seed (default: the exercise's; recorded in the report).")
@click.option("--audience", type=click.Choice(["candidate", "panel"]), default="candidate", show_default=True,
              help="candidate hides hidden checks' details; panel shows everything.")
def submit(exercise, submission, sandbox, json_path, html_path, md_path, gpus, seed, audience):
    """Grade SUBMISSION (a file, or a folder holding it) against EXERCISE (a folder or a name).

    Without SUBMISSION, the exercise's own stub file is graded: edit it in place and rerun.
    """
    from rich.console import Console

    from grader.grading import grade
    from grader.reports.render import check_report_paths, write_reports
    from grader.reports.terminal import render_terminal

    check_report_paths(json_path=json_path, html_path=html_path, md_path=md_path)  # fail before grading
    report = grade(exercise, submission, sandbox=sandbox, gpus=gpus, seed=seed)
    render_terminal(report, Console(), audience=audience)
    write_reports(report, json_path=json_path, html_path=html_path, md_path=md_path, audience=audience)
    if not report.graded:
        sys.exit(EXIT_INFRA)
