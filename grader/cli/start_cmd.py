"""``grader start NAME``: timed mode, a clock for one exercise like the real interview's time limit."""

from __future__ import annotations

import click

from grader.cli.options import exercise_root_option
from grader.errors import UsageError

#: The real interview's length; kept equal to ``grader.practice.clock.DEFAULT_MINUTES`` (a test says so).
DEFAULT_MINUTES = 45


def _exercise_name(spec: str, *, stopping: bool, exercise_root=None) -> str:
    """The exercise's own name (the clock's key, as on its reports); a stale clock can be stopped by name."""
    from pathlib import Path

    from grader.catalogs import authoring_catalog
    from grader.practice import clock

    try:
        return authoring_catalog(Path.cwd(), exercise_root=exercise_root).resolve(spec).name
    except UsageError:
        if stopping and clock.current(spec) is not None:
            return spec  # the exercise is gone, its clock is not: let the candidate stop it
        raise


@click.command("start")
@click.argument("name")
@click.option("--minutes", type=float, default=DEFAULT_MINUTES, show_default=True,
              help="Time limit in minutes.")
@click.option("--restart", is_flag=True, help="Start again from zero if a clock is already running.")
@click.option("--stop", is_flag=True, help="End timed mode for NAME.")
@exercise_root_option("exercises/ of the checkout around this folder, else the installed one")
def start(name, minutes, restart, stop, exercise_root):
    """Start a clock for exercise NAME: later `grader submit`s show the time taken and mark a late one."""
    from rich.console import Console
    from rich.text import Text

    from grader.practice import clock
    from grader.reports.headline import fmt_duration, fmt_points

    console = Console(highlight=False)
    if stop and restart:
        raise UsageError("--stop and --restart contradict each other.",
                         hint=f"Use `grader start {name} --stop` to end timed mode, or --restart to start over.")
    exercise = _exercise_name(name, stopping=stop, exercise_root=exercise_root)
    if stop:
        ended = clock.stop(exercise)
        if ended is None:
            console.print(Text(f"No clock was running for {exercise}: nothing to stop."))
        else:
            console.print(Text(f"Timed mode for {exercise} stopped after {fmt_duration(ended.elapsed_s())} "
                               f"(limit {fmt_points(ended.minutes)} min)."))
        return
    restarted = restart and clock.current(exercise) is not None
    c = clock.start(exercise, minutes, restart=restart)
    console.print(Text(f"Clock {'restarted' if restarted else 'started'} for {exercise}: {fmt_points(c.minutes)} min, "
                       f"ends at {clock.fmt_local(c.deadline)} (local time)."))
    console.print(Text(f"`grader submit {exercise}` will show the elapsed time on the scorecard "
                       "and mark a submission after that as late."))
    console.print(Text(f"`grader start {exercise} --stop` ends timed mode."))
