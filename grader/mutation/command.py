"""``grader validate --mutation``: generate, grade and report each exercise's mutants; the exit status.

Exit 0 when every mutant was graded, whatever the score (the score is for the author to
read, not a gate, unless ``--min-score`` makes it one); 3 when a grading could not be
graded (rerun); 4 when an exercise's mutation run proves nothing or misleads: its reference
loses points, its ``equivalent_mutants.toml`` is bad or holds a stale record, or its score
is below ``--min-score``.
"""

from __future__ import annotations

from pathlib import Path

from grader.progress import Work
from grader.errors import EXIT_GRADED, EXIT_INFRA, EXIT_INVALID, UsageError
from grader.wire.grant import GpuRequest

INSTALL_HINT = "Install the mutation extra: pip install -c constraints.txt -e '.[mutation]'"


def run_mutation(console, exercises: list[str], *, sandbox: str, jobs: int, seed: int | None, solutions_dir: Path,
                 max_mutants: int | None, json_path: Path | None, min_score: float | None,
                 runtime: str | None, gpus: GpuRequest | None, work: Work | None = None) -> int:
    """Run and print everything; the exit status. ``work`` hears each grading, for a progress display."""
    try:
        from grader.mutation.render import print_exercise, table, write_json
        from grader.mutation.score import Outcome, score_exercises
    except ImportError as e:  # cosmic-ray (and parso) come with the extra only
        raise UsageError(f"--mutation needs the mutation extra (cosmic-ray, parso): {e.name} is not installed.",
                         hint=INSTALL_HINT) from None
    if not console.is_terminal:
        console.width = max(console.width, 120)  # a log or a pipe: whole exercise names and diff lines
    results = []
    for result in score_exercises(exercises, sandbox=sandbox, jobs=jobs, seed=seed, solutions_dir=solutions_dir,
                                  max_mutants=max_mutants, runtime=runtime, gpus=gpus, work=work):
        results.append(result)
        print_exercise(console, result)
        if json_path is not None:  # after each exercise: a run stopped midway keeps what it graded
            write_json(json_path, results, max_mutants=max_mutants, seed=seed,
                       complete=len(results) == len(exercises))
    console.print(table(results))
    low = [r for r in results if min_score is not None and r.score is not None and r.score < min_score]
    for r in low:
        console.print(f"[bold red]{r.exercise}[/]: mutation score {r.score:.0%} is below {min_score:.0%}")
    not_graded = any(r.outcome is Outcome.NOT_GRADED for x in results for r in x.results)
    if not_graded or any(x.reference_not_graded for x in results):
        return EXIT_INFRA
    if low or any(x.problems or x.stale for x in results):
        return EXIT_INVALID
    return EXIT_GRADED
