"""What ``grader validate`` prints for each exercise it graded, the summary at the end, and its ``--json``.

Each problem is said once, in full, where it is found: the authoring rules before grading, a failing
file's verdict on its own line under its exercise's table, an exercise's own problem beside it (unless a rule already said the
same words: a patch that does not apply is both). The summary at the end names each failing
exercise with what failed, in one line, so a long run's verdict is on the last screen.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

from grader.atomic import atomic_write
from grader.authoring.findings import Finding
from grader.authoring.terminal import failing
from grader.host.validation import ExerciseValidation
from grader.untrusted import in_markup


def print_result(console: Console, result: ExerciseValidation, findings: list[Finding], *, strict: bool,
                 gpus: bool) -> None:
    """One exercise's table, its own problems not said already, parity, and what each check catches."""
    ok = result.ok and not failing(findings, strict=strict)
    table = Table(title=f"{result.exercise}: {'ok' if ok else 'FAILED'} in {result.duration_s:.1f} s",
                  title_justify="left")
    for column in ("file", "kind", "score", "verdict"):
        table.add_column(column)
    for v in result.verdicts:
        # Names, messages and file names are text, never markup: a check called "rows [0, 1]" stays whole.
        score = f"{v.report.score:g}/{v.report.max_score:g}" if v.report.graded else "not graded"
        table.add_row(in_markup(v.path.name), v.kind, score, "ok" if v.ok else "[red]FAILED (below)[/]")
    console.print(table)
    for v in result.verdicts:  # in full, one line each: a table cell would fold a long message out of reach
        if not v.ok:
            console.print(f"[red]{in_markup(result.exercise)}: {v.kind} {in_markup(v.path.name)}: "
                          f"{in_markup(v.problem)}[/]", soft_wrap=True)
    for problem in [*unsaid(result.problems, findings), *result.disagreements]:
        console.print(f"[red]{in_markup(result.exercise)}: {in_markup(problem)}[/]", soft_wrap=True)
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


def unsaid(problems: list[str], findings: list[Finding]) -> list[str]:
    """The exercise's problems no authoring finding has said already (a finding's message adds its fix)."""
    return [p for p in problems if not any(f.message.startswith(p) for f in findings)]


def print_summary(console: Console, results: list[ExerciseValidation], findings: dict[str, list[Finding]], *,
                  strict: bool) -> bool:
    """One line per failing exercise naming what failed (each was said in full above), then each check that
    raised an error of its own; whether any exercise failed."""
    unproved = [r.exercise for r in results if r.not_validated is not None]
    if unproved:
        console.print(f"[bold yellow]not validated (they need a GPU): {in_markup(', '.join(unproved))}[/]; every other "
                      "exercise named was graded", soft_wrap=True)
    names = list(dict.fromkeys([*(r.exercise for r in results), *findings]))
    by_name = {r.exercise: r for r in results}
    any_failed = False
    for name in names:
        parts = []
        result = by_name.get(name)
        if result is not None and result.not_validated is None and not result.ok:
            parts += [f"{v.kind} {v.path.name}" for v in result.verdicts if not v.ok]
            own = unsaid(result.problems, findings.get(name, []))
            parts += [f"{len(own)} problem(s) of the exercise"] if own else []
            parts += ["parity"] if result.disagreements else []
        rules = Counter(f.rule.value for f in failing(findings.get(name, []), strict=strict))
        parts += [f"rule {rule}" + (f" ({n} files)" if n > 1 else "") for rule, n in rules.items()]
        if parts:
            any_failed = True
            console.print(f"[bold red]{in_markup(name)}: FAILED[/]: {in_markup('; '.join(parts))} (said above)",
                          soft_wrap=True)
    for r in results:  # named once per check, beside the files: the exercise's own bug to fix
        for check, files in r.check_errors.items():
            console.print(f"[bold red]{in_markup(r.exercise)}[/]: check {in_markup(check)} raised an error of its "
                          f"own (a bug in the check, not a catch) on {in_markup(', '.join(files))}", soft_wrap=True)
    return any_failed


def write_json(path: Path, results: list[ExerciseValidation], findings: dict[str, list[Finding]], *,
               strict: bool) -> None:
    """``--json``: every exercise's verdicts and failing rule findings, as data."""
    data = {"exercises": [{
        "exercise": r.exercise, "ok": r.ok and not failing(findings.get(r.exercise, []), strict=strict),
        "not_validated": r.not_validated, "duration_s": round(r.duration_s, 3), "problems": r.problems,
        "disagreements": r.disagreements,
        "verdicts": [{"file": v.path.name, "kind": v.kind, "graded": v.report.graded, "score": v.report.score,
                      "max_score": v.report.max_score, "ok": v.ok, "problem": v.problem} for v in r.verdicts],
        "findings": [{"rule": f.rule.value, "severity": f.severity.value, "where": f.where(Path.cwd()),
                      "message": f.message} for f in findings.get(r.exercise, [])],
    } for r in results]}
    with atomic_write(path) as f:
        json.dump(data, f, indent=2)
        f.write("\n")
