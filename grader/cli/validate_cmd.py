"""``grader validate``: prove each exercise's checks on its reference, stub, variants and mutants."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.errors import EXIT_INFRA, EXIT_INVALID, UsageError
from grader.cli.options import exercise_root_option, gpus_option, renamed, runtime_option, solutions_root_option


@click.command("validate")
@click.argument("exercises", nargs=-1, metavar="[NAME]...")
@click.option("--sandbox", type=click.Choice(["docker", "local"]), default="docker", show_default=True)
@click.option("--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Gradings at once (each its own judge and sandbox).")
@click.option("--seed", type=int, help="Hypothesis seed (default: each exercise's).")
@exercise_root_option("exercises/ of the checkout around this folder, else the installed one")
@solutions_root_option()
@renamed("--solutions", "--solutions-root", "solutions_root", type=click.Path(file_okay=False, path_type=Path))
@click.option("--more", is_flag=True, help="Also grade the mutants in more_mutants/ (CI grades mutants/ only).")
@click.option("--parity", is_flag=True,
              help="With --sandbox docker: also grade the reference, the stub and the first mutant in the local "
                   "sandbox, and require Docker's outcome check by check (what a candidate without Docker gets).")
@click.option("--mutation", is_flag=True,
              help="Instead: grade mutants generated from each reference and report the checks' mutation score "
                   "(needs the mutation extra).")
@click.option("--max-mutants", type=click.IntRange(1), metavar="N",
              help="With --mutation: grade at most N mutants per exercise (a stable sample).")
@click.option("--min-score", type=click.FloatRange(0, 1), metavar="X",
              help="With --mutation: exit 4 when an exercise's score (0-1) is below X.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="With --mutation: write every mutant's outcome to this JSON file.")
@click.option("--record", is_flag=True, help="Write each exercise's mutant signatures to exercises/<name>/mistakes.json "
              "(what diagnosis matches gradings against), as the cuda record with --gpus, else the cpu one; without "
              "it, differences from the record are warnings.")
@click.option("--rules", type=click.Choice(["check", "skip", "only"]), default="check", show_default=True,
              help="The authoring rules (the folder's layout, prompt, contract table, NaN-safe checks, mistake record, "
                   "interview guide; AUTHORING.md) on each exercise before grading: check (an error fails the "
                   "exercise), skip, or only (no grading).")
@click.option("--strict", is_flag=True, help="The authoring rules' warnings (a missing or stale mistakes.json) fail "
              "the exercise too, as the repository's tests hold it.")
@gpus_option("each grading (every check must run: one skipped fails the file; compared with the cuda record)")
@runtime_option()
def validate(exercises, sandbox, jobs, seed, exercise_root, solutions_root, more, parity, record, mutation,
             max_mutants, min_score, json_path, rules, strict, gpus, runtime):
    """Check that every exercise (all by default, or those NAMEd) proves what it must.

    It reads the checkout around this folder (exercises/ and solutions/ beside a pyproject.toml
    naming grader), else the installed one, and says which when it is not the installed one.

    The reference and every variant earn full marks, the untouched stub earns zero,
    and every mutant loses points. Before grading, the authoring rules (grader.authoring)
    read each exercise's files; an error among their findings fails the exercise too.
    Exits 4 naming the exercise and the file, check or rule
    when one does not, 3 when a grading could not be graded. With --gpus every check must
    run; without, an exercise that needs a GPU is NOT VALIDATED (said, not graded), and
    naming one is a usage error (exit 2).
    """
    from rich.console import Console
    from grader.untrusted import in_markup
    from rich.table import Table

    from grader.cli.where import authoring
    from grader.host.validation import validate_exercises

    if not mutation and (max_mutants or min_score is not None or json_path):
        raise click.UsageError("--max-mutants, --min-score and --json go with --mutation")
    if parity and (sandbox != "docker" or mutation):
        raise click.UsageError("--parity compares the local sandbox with Docker: it goes with --sandbox docker, "
                               "not with --mutation")
    if mutation and record:
        raise click.UsageError("--record writes the signatures of the exercise's own mutants; it does not go with --mutation")
    if rules == "only" and (mutation or record or parity):
        raise click.UsageError("--rules only reads the exercises' files and grades nothing: it does not go with "
                               "--mutation, --record or --parity")
    from grader.authoring.terminal import check_and_print, failing, print_failures
    from grader.exercise import GpuPolicy

    catalog = authoring(exercise_root, solutions_root, verb="validating")
    named = bool(exercises)
    exercises = [catalog.resolve(spec) for spec in exercises] or [catalog.load(n) for n in catalog.names()]
    solutions_dir = catalog.solutions
    console = Console()
    findings = {}
    if rules != "skip" and not mutation:  # read from the files, in seconds: before any grading, GPU or not
        findings = check_and_print(console, exercises, solutions_dir, strict=strict, records=not record)
        if rules == "only":  # each finding was just printed: the exit status says the rest
            sys.exit(EXIT_INVALID if any(failing(f, strict=strict) for f in findings.values()) else 0)
    required = [ex.name for ex in exercises if ex.config.exercise.gpu is GpuPolicy.REQUIRED]
    if named and required and not gpus:  # named, as `grader submit NAME` without --gpus: exit 2 naming the GPU
        raise UsageError(f"{', '.join(required)} need{'s' if len(required) == 1 else ''} a GPU "
                         "(gpu = \"required\") and none was requested: validated only with --gpus.",
                         hint=f"Run `grader validate {' '.join(required)} --gpus all` on a machine with an NVIDIA "
                              "GPU (--sandbox local uses this machine's own torch).")
    if sandbox == "docker":
        from grader.cli.leftovers import reap_leftovers
        from grader.backends import engine
        from grader.backends.oci_runtime import require_runtime, resolve_runtime

        runtime = resolve_runtime(runtime)  # once, and checked before any grading
        require_runtime(engine.connect(timeout=10), runtime)
        reap_leftovers(console)
    else:
        runtime = None
    if mutation:
        from grader.mutation.command import run_mutation

        if not gpus and required:  # all exercises, without a GPU: those that need one are said, not graded
            console.print(f"[bold yellow]not scored (they need a GPU, --gpus): {in_markup(', '.join(required))}[/]",
                          soft_wrap=True)
            exercises = [ex for ex in exercises if ex.name not in required]
        sys.exit(run_mutation(console, exercises, sandbox=sandbox, jobs=jobs, seed=seed,
                              solutions_dir=solutions_dir, max_mutants=max_mutants,
                              json_path=json_path, min_score=min_score, runtime=runtime, gpus=gpus))
    from grader.cli.mistakes_note import note_mistakes

    loaded = {ex.name: ex for ex in exercises}  # for their mistake records
    results = []
    for result in validate_exercises(exercises, sandbox=sandbox, jobs=jobs, seed=seed,
                                     solutions_dir=solutions_dir, more=more, runtime=runtime,
                                     gpus=gpus, parity="local" if parity else None):
        results.append(result)
        if result.not_validated is not None:
            console.print(f"[bold yellow]{in_markup(result.exercise)}: NOT VALIDATED[/]: {in_markup(result.not_validated)}",
                          soft_wrap=True)
            continue
        ok = result.ok and not failing(findings.get(result.exercise, []), strict=strict)
        table = Table(title=f"{result.exercise}: {'ok' if ok else 'FAILED'} in {result.duration_s:.1f} s",
                      title_justify="left")
        for column in ("file", "kind", "score", "verdict"):
            table.add_column(column)
        for v in result.verdicts:
            # Names, messages and file names are text, never markup: a check called "rows [0, 1]" stays whole.
            score = f"{v.report.score:g}/{v.report.max_score:g}" if v.report.graded else "not graded"
            table.add_row(in_markup(v.path.name), v.kind, score,
                          "ok" if v.ok else f"[red]{in_markup(v.problem)}[/]")
        console.print(table)
        for problem in [*result.problems, *result.disagreements]:
            console.print(f"[red]{in_markup(result.exercise)}: {in_markup(problem)}[/]")
        if result.compared and not result.disagreements:
            names = ", ".join(f"{v.path.name} {v.report.score:g}/{v.report.max_score:g}" for v in result.compared)
            console.print(f"parity: {in_markup(names)} in the local sandbox too, the same check by check")
        catches = Table(title="what each check catches", title_justify="left")
        catches.add_column("check")
        catches.add_column("mutants caught")
        for check, mutants in result.catches().items():
            catches.add_row(in_markup(check), in_markup(", ".join(mutants)) or "[dim](none)[/]")
        console.print(catches)
        skipped = result.skipped_checks()
        if skipped and not gpus:
            console.print(f"[yellow]{in_markup(result.exercise)}: {len(skipped)} GPU check(s) not validated here "
                          f"(skipped without --gpus): {in_markup(', '.join(skipped))}; on a machine with an NVIDIA GPU "
                          f"run `grader validate {in_markup(result.exercise)} --gpus all`[/]", soft_wrap=True)
        if result.exercise in loaded:
            note_mistakes(console, loaded[result.exercise], result, solutions_dir, record=record, flavor=result.flavor)
    unproved = [r.exercise for r in results if r.not_validated is not None]
    if unproved:
        console.print(f"[bold yellow]not validated (they need a GPU): {in_markup(', '.join(unproved))}[/]; every other "
                      "exercise named was graded", soft_wrap=True)
    bad = [r for r in results if not r.ok and r.not_validated is None]
    for r in bad:
        for v in r.verdicts:
            if not v.ok:
                console.print(f"[bold red]{in_markup(r.exercise)}[/]: {v.kind} {in_markup(v.path.name)}: {in_markup(v.problem)}",
                              soft_wrap=True)
        for line in r.disagreements:
            console.print(f"[bold red]{in_markup(r.exercise)}[/]: {in_markup(line)}", soft_wrap=True)
    for r in results:  # named once per check, beside the files: the exercise's own bug to fix
        for check, files in r.check_errors.items():
            console.print(f"[bold red]{in_markup(r.exercise)}[/]: check {in_markup(check)} raised an error of its "
                          f"own (a bug in the check, not a catch) on {in_markup(', '.join(files))}", soft_wrap=True)
    broken_rules = print_failures(console, findings, strict=strict)
    if any(not v.report.graded and not v.report.broken_checks for r in results for v in [*r.verdicts, *r.compared]):
        sys.exit(EXIT_INFRA)
    if bad or broken_rules:
        sys.exit(EXIT_INVALID)
