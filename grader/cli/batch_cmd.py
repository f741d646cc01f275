"""``grader batch``: grade a folder of candidates into an output folder a panel can trust."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from grader.errors import EXIT_INFRA, EXIT_INTERRUPTED, InfraError, UsageError
from grader.cli.options import (exercise_root_option, gpus_option, jobs_option, only_names, only_option,
                                output_option, renamed, resolve_sandbox, runtime_option, sandbox_option)
from grader.backends.oci_runtime import resolve_runtime
from grader.unknown_exercise import UnknownExercise
from grader.untrusted import in_markup


@click.command()
@click.argument("submissions", type=click.Path(path_type=Path))
@output_option("Output folder: new, empty, or one an earlier batch made (then resumed). Required.")
@renamed("--out", "-o/--output", "output", type=click.Path(path_type=Path))
@only_option("Only these exercises (default: every exercise of the catalog found)")
@renamed("--exercises", "--only", "only", multiple=True)
@jobs_option()
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local: threads on this machine; ray: one Ray task per grading.")
@click.option("--ray-address", help="Ray cluster to join (default with --engine ray: start one here).")
@gpus_option("each grading; with --engine ray each gets its own GPU(s)")
@sandbox_option("docker")
@click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True,
              help="Extra tries for a grading the infrastructure failed.")
@click.option("--seed", type=int, help="Hypothesis seed for every grading (default: each exercise's).")
@runtime_option("Recorded in each report; results are kept per runtime.")
@exercise_root_option("the installed exercises (never a folder here)")
@click.option("--solutions-root", "solutions", multiple=True, type=click.Path(path_type=Path, file_okay=False),
              help="Folder holding <exercise>/ solutions every submission is compared with (repeatable; default: "
                   "the solutions/ beside the exercise root). The grader's own published solutions/ always are.")
def batch(submissions, output, only, jobs, engine, ray_address, gpus, sandbox, retries, seed, runtime, exercise_root,
          solutions):
    """Grade SUBMISSIONS, laid out as <candidate>/<exercise>/<file>.py, into --output.

    Rerunning the same command grades only what is new or changed, and finishes
    whatever an interrupted run left.
    """
    from rich.console import Console

    from grader.batch.engines import default_jobs, open_engine
    from grader.batch.outdir import prepare_output
    from grader.batch.publish import publish
    from grader.batch.published import published_files, solution_folders
    from grader.batch.runner import run_batch
    from grader.batch.store import Store
    from grader.cli.batch_progress import ProgressListener
    from grader.cli.heartbeat import shown_progress
    from grader.progress import Work
    from grader.cli.leftovers import reap_leftovers

    from grader.catalogs import grading_catalog

    if output is None:
        raise click.UsageError("Missing option '-o' / '--output': the folder to write the results into.")
    console = Console(stderr=True, highlight=False)
    catalog, elsewhere = grading_catalog(exercise_root=exercise_root)
    if elsewhere:
        console.print(f"[bold yellow]note:[/] {in_markup(elsewhere)}", soft_wrap=True)
    exercises = _exercises(catalog)
    for folder in solutions:
        if not folder.is_dir():
            raise UsageError(f"--solutions-root {str(folder)!r} is not a folder.")
    names = only_names(only) or None
    for name in names or []:
        if name not in exercises:
            raise UnknownExercise(name, exercises, what=f"Unknown exercise {name!r} in --only ({catalog.describe()}).")
    sandbox = resolve_sandbox(sandbox, gpus=gpus, say=lambda note: console.print(f"[bold yellow]note:[/] {in_markup(note)}",
                                                                               soft_wrap=True))
    runtime = resolve_runtime(runtime) if sandbox == "docker" else None  # once: every job carries it
    dest = prepare_output(submissions, output)
    if sandbox == "docker" and engine == "local":
        _require_engine(runtime)
        reap_leftovers(console)
    store = Store(dest)
    runner = open_engine(engine, jobs=jobs or default_jobs(), address=ray_address)
    listener = ProgressListener(console)
    t0 = time.perf_counter()
    try:
        with listener:
            result = run_batch(submissions, store, runner, exercises=exercises, only=names, sandbox=sandbox,
                               gpus=gpus, seed=seed, runtime=runtime, retries=retries, listener=listener)
    except KeyboardInterrupt:
        from grader.cli.interrupts import forget_handled_interrupt

        forget_handled_interrupt()
        _interrupted(runner, store, console)
        sys.exit(EXIT_INTERRUPTED)
    runner.close()
    work = Work("publishing (similarity, exports, the panel page)", total=1)
    with shown_progress(console, work):  # the similarity pass alone may take up to a minute
        work.start("the similarity pass")
        answers, notes = published_files(exercises, solution_folders(exercise_root, list(solutions)))
        publish(result, dest, exercises, answers, notes)
        work.finish("the similarity pass")
    store.close()
    _summary(console, result, dest, time.perf_counter() - t0)
    if any(r.status.value in ("not_graded", "check_error") for r in result.rows):
        sys.exit(EXIT_INFRA)  # something gradable has no score: not a clean run


def _exercises(catalog) -> dict:
    found = {name: catalog.load(name) for name in catalog.names()}
    if not found:
        raise UsageError(f"No exercises in {catalog.describe()} (folders holding exercise.toml).")
    return found


def _require_engine(runtime: str) -> None:
    """Fail before grading anything when Docker is down, the image is missing or the engine does not
    know ``runtime``: a batch of 'not graded' rows helps no one."""
    from grader.backends import engine
    from grader.build import naming
    from grader.backends.oci_runtime import require_runtime

    client = engine.connect(timeout=10)
    if naming.find_runtime_image(client) is None:
        raise InfraError(f"The sandbox image {naming.runtime_image_name()} is not built.",
                         hint="Run `grader sandbox build` (or `bash sandbox/bootstrap.sh`), then rerun the batch.")
    require_runtime(client, runtime)


def _interrupted(runner, store, console) -> None:
    from grader.host import warm

    runner.close(cancel=True)
    killed = warm.kill_all()
    try:
        from grader.backends import docker_backend, engine

        docker_backend.reap(engine.connect(timeout=10))
    except Exception:
        pass
    kept = store.count()
    store.close()
    console.print(f"[bold yellow]interrupted:[/] stopped {killed} grading(s) in flight; the {kept} stored "
                  "result(s) are kept. Run the same command again to finish.")


def _summary(console, result, dest: Path, seconds: float) -> None:
    from collections import Counter

    from grader.untrusted import in_markup

    counts = Counter(r.status.value for r in result.rows)
    parts = ", ".join(f"{n} {status.replace('_', ' ')}" for status, n in sorted(counts.items()))
    console.print(f"{len(result.rows)} rows: {parts}. Graded now: {result.graded_now}, "
                  f"from earlier runs: {result.reused}. {seconds:.0f} s.")
    for problem in result.layout.problems:
        console.print(f"[yellow]layout:[/] {in_markup(problem)}")
    for line in result.set_aside_lines():
        console.print(f"[bold red]store:[/] {in_markup(line)}")
    matches = [r for r in result.rows if r.published is not None]
    for row in matches[:10]:
        console.print(f"[bold red]published:[/] {in_markup(f'{row.candidate}/{row.exercise} {row.published.line}')}")
    if len(matches) > 10:
        console.print(f"[bold red]published:[/] and {len(matches) - 10} more (similarity.html)")
    for ignored in result.layout.ignored:
        console.print(f"[dim]ignored: {in_markup(ignored)}[/]")
    local = sum(not r.isolated for r in result.rows)
    if local:
        console.print(f"[bold yellow]{local} result(s) graded in the local sandbox: NOT isolated[/] (the page, "
                      "summary.csv and results.jsonl say so; a Docker run grades them again).")
    if counts.get("check_error"):
        console.print(f"[bold red]{counts['check_error']} check error(s)[/]: a check of the exercise broke (the "
                      "grader's bug, not the candidates'); nothing was scored for them. Fix the check, then rerun.")
    if counts.get("not_graded"):
        console.print(f"[bold red]{counts['not_graded']} not graded[/] (infrastructure): rerun the same command.")
    console.print(f"Panel view: {in_markup(str(dest / 'index.html'))}")
