"""Grade an exercise's generated mutants and say which its checks kill: the mutation score.

Each mutant is graded as any submission is (:func:`grader.host.grading.grade`, in one pool of
``jobs`` gradings for all exercises, as ``grader validate`` does) and classified:

- killed: it lost points on a check that failed or raised;
- timed out: it lost points only on checks that ran past a deadline (a call's or the
  grading's) - caught, but by the clock, which is slow and says little about the checks;
- survived: full marks, so no check tells it from the reference;
- equivalent: recorded in ``equivalent_mutants.toml`` as behaving like the reference
  (not graded: it survives by definition);
- not graded: the grading failed (infrastructure), which says nothing about the checks; rerun.
- check error: a check's own code raised on the mutant (issue 26): never a kill; named as a problem
  of the exercise (exit 4), and left out of the score like "not graded".

score = killed / (total - equivalent - not graded). Each grading costs seconds, so
``max_mutants`` grades a deterministic sample per exercise: the mutants whose
``sha256(exercise:id)`` sort first, so that a sample stays the same from run to run and
a new mutant displaces at most one old one. Stopping a grading at its first lost point
would save time, but the judge has no such mode (a judge ended early is "not graded");
the saving it would bring is measured from the check durations instead (:attr:`early_stop_share`).
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Iterable, Iterator

from grader.corpus import SOLUTIONS_DIR
from grader.errors import ExerciseError
from grader.exercise import Exercise, load_exercise
from grader.host.grading import grade
from grader.mutation.equivalents import FILENAME, Equivalent, Stale, load_equivalents, stale
from grader.mutation.generate import Dropped, Mutant, generate
from grader.reports.model import Report, Status
from grader.wire.grant import GpuRequest


class Outcome(str, Enum):
    KILLED = "killed"
    SURVIVED = "survived"
    TIMED_OUT = "timed out"
    EQUIVALENT = "equivalent"
    NOT_GRADED = "not graded"
    CHECK_ERROR = "check error"  # a check's own code raised on it: the exercise's bug (a problem), not a kill


@dataclass
class MutantResult:
    mutant: Mutant
    outcome: Outcome
    lost: list[str] = field(default_factory=list)  # names of the checks it lost points on
    reason: str | None = None  # not graded: why; equivalent: the recorded reason
    duration_s: float = 0.0
    check_s: float = 0.0  # the checks' own time
    check_s_to_first_loss: float = 0.0  # ... up to and including the first check it lost points on


@dataclass
class ExerciseMutation:
    """One exercise's mutation run: what was made, what was graded and how each mutant fared."""

    exercise: str
    generated: int = 0
    dropped: list[Dropped] = field(default_factory=list)
    results: list[MutantResult] = field(default_factory=list)
    stale: list[Stale] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # the reference itself, the equivalents file
    #: The reference's own grading was not graded (infrastructure): the run proves nothing, exit 3, not 4.
    reference_not_graded: bool = False
    duration_s: float = 0.0

    def count(self, outcome: Outcome) -> int:
        return sum(r.outcome is outcome for r in self.results)

    @property
    def score(self) -> float | None:
        """killed / (total - equivalent - not graded); None when nothing counts."""
        counted = sum(r.outcome in (Outcome.KILLED, Outcome.SURVIVED, Outcome.TIMED_OUT) for r in self.results)
        return self.count(Outcome.KILLED) / counted if counted else None

    @property
    def survivors(self) -> list[MutantResult]:
        return [r for r in self.results if r.outcome is Outcome.SURVIVED]

    @property
    def early_stop_share(self) -> float | None:
        """Of the killed mutants' check time, the share after their first lost point: what stopping there would save."""
        killed = [r for r in self.results if r.outcome is Outcome.KILLED and r.check_s > 0]
        total = sum(r.check_s for r in killed)
        return (total - sum(r.check_s_to_first_loss for r in killed)) / total if total else None


def classify(report: Report) -> tuple[Outcome, list[str], str | None]:
    """A mutant's outcome from its report, with the checks it lost points on (and why, when not graded)."""
    if report.broken_checks:
        return Outcome.CHECK_ERROR, [c.name for c in report.broken_checks], report.not_graded_reason
    if not report.graded:
        return Outcome.NOT_GRADED, [], report.not_graded_reason
    lost = [c for c in report.checks if c.lost_points]
    if not lost and report.score >= report.max_score:
        return Outcome.SURVIVED, [], None
    names = [c.name for c in lost]
    if lost and all(c.status is Status.TIMEOUT for c in lost):
        return Outcome.TIMED_OUT, names, None
    return Outcome.KILLED, names, None


def sample(mutants: list[Mutant], exercise: str, limit: int | None) -> list[Mutant]:
    """At most ``limit`` of ``mutants``, chosen by a hash of each id (stable), kept in their own order."""
    if limit is None or len(mutants) <= limit:
        return list(mutants)
    rank = sorted(mutants, key=lambda m: hashlib.sha256(f"{exercise}:{m.id}".encode()).hexdigest())
    chosen = {m.id for m in rank[:limit]}
    return [m for m in mutants if m.id in chosen]


def score_exercises(specs: Iterable[str | Path | Exercise], *, sandbox: str = "docker", jobs: int = 1,
                    seed: int | None = None, solutions_dir: Path = SOLUTIONS_DIR, max_mutants: int | None = None,
                    runtime: str | None = None, gpus: GpuRequest | None = None) -> Iterator[ExerciseMutation]:
    """Generate, sample and grade every exercise's mutants in one pool; yield each exercise's result in order."""
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    folder = tempfile.TemporaryDirectory(prefix="grader-mutation-")

    def run(ex: Exercise, path: Path):
        start = time.perf_counter()
        report = grade(ex, path, sandbox=sandbox, seed=seed, runtime=runtime, gpus=gpus, solutions_dir=solutions_dir)
        return report, start, time.perf_counter()

    try:
        planned = []
        for spec in specs:
            ex = spec if isinstance(spec, Exercise) else load_exercise(spec)
            result, reference, chosen, records = _plan(ex, solutions_dir, max_mutants)
            futures = []
            if reference is not None:
                futures.append(pool.submit(run, ex, reference))
                for n, mutant in enumerate(m for m in chosen if m.id not in records):
                    path = Path(folder.name) / ex.name / str(n) / reference.name
                    path.parent.mkdir(parents=True)
                    path.write_text(mutant.source, encoding="utf-8")
                    futures.append(pool.submit(run, ex, path))
            planned.append((result, chosen, records, futures))
        for result, chosen, records, futures in planned:
            graded = [f.result() for f in futures]
            if graded:
                _collect(result, graded, chosen, records)
            yield result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # stopped early (Ctrl-C): drop what has not started
        folder.cleanup()


def _plan(ex: Exercise, solutions_dir: Path, max_mutants: int | None):
    """The result to fill, the reference's path (None: nothing to grade), the sampled mutants and the records
    that excuse some of them (a stale record excuses nothing: its mutant is graded)."""
    result = ExerciseMutation(ex.name)
    root = solutions_dir / ex.name
    reference = root / ex.config.exercise.submission
    if not reference.is_file():
        result.problems.append(f"no reference solution at {reference}")
        return result, None, [], {}
    try:
        generation = generate(reference.read_text(encoding="utf-8"), reference.name)
    except SyntaxError as e:
        result.problems.append(f"{reference}: does not parse ({e.msg}, line {e.lineno})")
        return result, None, [], {}
    try:
        records = {r.id: r for r in load_equivalents(root / FILENAME)}
    except ExerciseError as e:  # named; the mutants are still graded, none excused
        result.problems.append(str(e))
        records = {}
    result.generated, result.dropped = len(generation.mutants), generation.dropped
    result.stale = stale(list(records.values()), generation)
    for s in result.stale:
        records.pop(s.id)
    return result, reference, sample(generation.mutants, ex.name, max_mutants), records


def _collect(result: ExerciseMutation, graded, chosen: list[Mutant], records: dict[str, Equivalent]) -> None:
    """Classify each graded mutant (``graded``: the reference's grading first, then each of ``chosen``'s
    not excused by ``records``, in order) into ``result.results``, in the mutants' own order."""
    (reference, _, _), gradings = graded[0], iter(graded[1:])
    outcome, lost, why = classify(reference)
    if outcome is Outcome.NOT_GRADED:
        result.reference_not_graded = True
        result.problems.append(f"the reference was not graded: {why}")
    elif outcome is not Outcome.SURVIVED:
        result.problems.append("the reference loses points on " + "; ".join(lost) + ": its mutants prove nothing")
    for mutant in chosen:
        if mutant.id in records:
            result.results.append(MutantResult(mutant, Outcome.EQUIVALENT, reason=records[mutant.id].reason))
            continue
        report, start, end = next(gradings)
        outcome, lost, why = classify(report)
        if report.broken_checks:  # a check's own bug, found by a generated mutant: the exercise's to fix (exit 4)
            names = ", ".join(c.name for c in report.broken_checks)
            result.problems.append(f"check error on mutant {mutant.id}: {names} raised an error of its own "
                                   "(a bug in the check, not a kill)")
        r = MutantResult(mutant, outcome, lost, why, duration_s=round(end - start, 2))
        r.check_s = sum(c.duration_s or 0.0 for c in report.checks)
        first = next((i for i, c in enumerate(report.checks) if c.name in lost), None)
        r.check_s_to_first_loss = sum(c.duration_s or 0.0 for c in report.checks[:first + 1]) if first is not None else 0.0
        result.results.append(r)
    result.duration_s = round(max(e for _, _, e in graded) - min(s for _, s, _ in graded), 2)
