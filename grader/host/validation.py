"""Prove an exercise's checks: the reference earns full marks, the stub zero, every mutant loses points.

What is graded is the corpus (:mod:`grader.corpus`): the reference, the stub, ``variants/``
(other correct answers: each must also earn full marks), ``mutants/`` (plausible wrong
answers, whole files or patches against the reference: each must lose points; CI grades
these) and ``more_mutants/`` (more of the same, graded with ``--more``: each grading costs
seconds, so CI keeps a curated set in which every catching check is exercised). A grading that
was not graded is a failure of the validation too, named as such, never a pass; so is a
patch that does not apply.

GPUs: with ``gpus`` (``grader validate --gpus``) every check must run; one that was skipped
(a GPU check in a sandbox that saw none) fails the file, since what it holds was not proved.
Without ``gpus``, an optional exercise's GPU checks skip and the result counts them as not
validated here; an exercise whose gpu policy is ``required`` is not graded at all and is
reported as not validated (``not_validated``), never as ok.

With ``parity``, a sample of the corpus (the reference, the stub and the first mutant by name: full
marks, zero and a mix) is graded a second time in another sandbox and must get the same outcome,
check by check: the local sandbox a candidate without Docker grades in must score as Docker does,
for every exercise (``bench/sandbox_parity.py`` compares the whole corpus).
"""

from __future__ import annotations

import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from grader.corpus import SOLUTIONS_DIR, CorpusFile, corpus, named_twice
from grader.exercise import EXERCISES_DIR, Exercise, GpuPolicy, load_exercise
from grader.host.grading import grade
from grader.mutant_patch import MutantPatchError
from grader.reports.compare import decision_differences
from grader.reports.model import FindingKind, Report, Status
from grader.reports.warning import WarningCode
from grader.wire.grant import Flavor, GpuRequest


@dataclass
class Verdict:
    kind: str  # reference | variant | stub | mutant
    path: Path  # the file as the author wrote it (a mutant's .diff for a patch)
    report: Report
    problem: str | None = None  # None: as expected

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass
class ExerciseValidation:
    exercise: str
    verdicts: list[Verdict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # about the exercise itself (no solution, ...)
    compared: list[Verdict] = field(default_factory=list)  # the parity sample's gradings in the second sandbox
    disagreements: list[str] = field(default_factory=list)  # where those scored otherwise, check by check
    duration_s: float = 0.0
    flavor: Flavor = Flavor.CPU  # cuda: graded with GPUs (its mistake record is the cuda one)
    not_validated: str | None = None  # why nothing was graded (a GPU-required exercise without --gpus)

    @property
    def ok(self) -> bool:
        """Proved: everything graded as it must. A GPU-required exercise not graded here is not ok (nor failed)."""
        return (self.not_validated is None and not self.problems and not self.disagreements
                and all(v.ok for v in self.verdicts))

    def skipped_checks(self) -> list[str]:
        """The reference's checks that were skipped here (GPU checks without --gpus): not proved by this run."""
        reference = next((v for v in self.verdicts if v.kind == "reference"), None)
        return [c.name for c in reference.report.checks if c.status is Status.SKIPPED] if reference else []

    @property
    def check_errors(self) -> dict[str, list[str]]:
        """Check name -> the files on which its own code raised (a bug in the check: the exercise fails)."""
        out: dict[str, list[str]] = {}
        for v in [*self.verdicts, *self.compared]:
            for c in v.report.broken_checks:
                out.setdefault(c.name, []).append(v.path.name)
        return out

    def catches(self) -> dict[str, list[str]]:
        """Check name -> the mutants it catches (loses points on), in the reference's check order."""
        out: dict[str, list[str]] = {}
        reference = next((v for v in self.verdicts if v.kind == "reference"), None)
        if reference is not None:
            out = {c.name: [] for c in reference.report.checks}
        for v in self.verdicts:
            if v.kind == "mutant":
                for c in v.report.checks:
                    # A check whose own code raised caught nothing: it is a check error (see ``check_errors``).
                    if c.lost_points and c.check_error is None:
                        out.setdefault(c.name, []).append(v.path.stem)
        return out


def _judge(kind: str, report: Report, *, gpus: bool = False) -> str | None:
    if report.broken_checks:  # the exercise's own bug, whatever the file: never "caught", never infrastructure
        return "check error: " + "; ".join(f"{c.name} [{c.id}] {c.check_error or c.message}"
                                           for c in report.broken_checks)
    if not report.graded:
        return f"not graded: {report.not_graded_reason}"
    skipped = [f"{c.name} ({c.message[:120]})" for c in report.checks if c.status is Status.SKIPPED]
    if gpus and skipped:  # what a GPU check holds is proved only by running it
        return "checks skipped although --gpus was given: " + "; ".join(skipped)
    lost = [f"{c.name} ({c.status.value}: {c.message[:120]})" for c in report.checks if c.lost_points]
    if kind in ("reference", "variant"):
        if lost:
            return "lost points on " + "; ".join(lost)
        if report.forbidden:
            return "uses forbidden " + ", ".join(sorted({h.api for h in report.forbidden}))
        if report.violations:  # a false alarm of the subset check: an honest file must never trip it
            return "leaves the language subset: " + "; ".join(f"{v.where}: {v.text}" for v in report.violations)
        serious = [f for f in report.findings if f.kind is not FindingKind.PRIVATE_TORCH]
        if serious:
            return "the sandbox's nets find " + "; ".join(f"{f.kind.value} {f.what} at {f.where}" for f in serious)
    elif kind == "stub" and report.score != 0:
        earned = [c.name for c in report.checks if c.score > 0]
        return f"the untouched stub earns {report.score:g} points on: " + "; ".join(earned)
    elif kind == "mutant" and report.score >= report.max_score:
        return "caught by no check (full marks)"
    return None


def validate_exercise(spec: str | Path | Exercise, **options) -> ExerciseValidation:
    """Grade one exercise's corpus (see :func:`validate_exercises` for the options)."""
    return next(validate_exercises([spec], **options))


def validate_exercises(specs: Iterable[str | Path | Exercise], *, sandbox: str = "docker", jobs: int = 1,
                       seed: int | None = None, solutions_dir: Path = SOLUTIONS_DIR, more: bool = False,
                       runtime: str | None = None, gpus: GpuRequest | None = None,
                       parity: str | None = None) -> Iterator[ExerciseValidation]:
    """Grade every exercise's corpus in one pool of ``jobs`` gradings; yield each exercise's result in
    order as soon as its own files are graded.

    One pool for all, not one per exercise: the last slow gradings of one exercise
    overlap the first ones of the next instead of leaving workers idle. ``runtime`` is
    the Docker sandbox's OCI runtime, the same for every file; ``gpus`` the GPU request (the
    exercise's policy decides, as for ``grader submit``). ``parity``: the second sandbox the
    parity sample is graded in (module docstring); any disagreement fails the exercise (``disagreements``).
    """
    if parity == sandbox:
        raise ValueError(f"parity compares two sandboxes: {sandbox!r} with itself compares nothing")
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))  # each grading is its own judge and sandbox
    from grader.backends.prestart import worth_starting_ahead

    ahead = worth_starting_ahead(jobs)
    applied = tempfile.TemporaryDirectory(prefix="grader-mutants-")  # patched mutants, as files grade() takes

    def run(ex: Exercise, item: CorpusFile, path: Path, where: str = sandbox) -> tuple[Verdict, float, float]:
        start = time.perf_counter()
        # Never answered alone: grading the untouched stub for real is how validate proves the checks reject it.
        # With a core to spare, the next grading's sandbox starts while this one runs (grader.backends.prestart):
        # the pool takes the corpus in order, so the next grading is mostly of the same exercise.
        report = grade(ex, path, sandbox=where, seed=seed, runtime=runtime if where == "docker" else None,
                       gpus=gpus, answer_alone=False, start_next=where == "docker" and ahead,
                       solutions_dir=solutions_dir)
        return (Verdict(item.kind, item.path, report, _judge(item.kind, report, gpus=gpus is not None)), start,
                time.perf_counter())

    try:
        planned = []
        for spec in specs:
            ex = spec if isinstance(spec, Exercise) else load_exercise(spec)
            if gpus is None and ex.config.exercise.gpu is GpuPolicy.REQUIRED:
                skipped = ExerciseValidation(ex.name, flavor=Flavor.CUDA, not_validated=needs_gpu(ex.name))
                planned.append((skipped, [], []))
                continue
            result, items = _plan(ex, solutions_dir, more, Path(applied.name) / ex.name)
            result.flavor = flavor_of_validation(ex, gpus)
            sample = parity_sample(items) if parity else []
            planned.append((result, [pool.submit(run, ex, item, path) for item, path in items],
                            [pool.submit(run, ex, item, path, parity) for item, path in sample]))
        for result, futures, second in planned:
            graded = [f.result() for f in futures]
            result.verdicts = [verdict for verdict, _, _ in graded]
            if second:
                again = [f.result() for f in second]
                result.compared = [verdict for verdict, _, _ in again]
                result.disagreements = _disagreements(result.verdicts, result.compared, sandbox, parity)
                graded += again
            result.problems += undocumented_checks(result.verdicts)
            if graded:  # from its first grading's start to its last one's end
                result.duration_s = round(max(e for _, _, e in graded) - min(s for _, s, _ in graded), 2)
            yield result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # stopped early (Ctrl-C): drop what has not started
        applied.cleanup()
        from grader.backends import prestart

        prestart.close_waiting()  # the sandbox started for a grading that will not come


def undocumented_checks(verdicts: list[Verdict]) -> list[str]:
    """The exercise's problem of a check without a docstring, once per check, as its gradings warned of it (by
    the warning's code: its words are for people)."""
    return sorted({w.message for v in verdicts for w in v.report.warned(WarningCode.UNDOCUMENTED_CHECK)})


def needs_gpu(name: str) -> str:
    """Why a GPU-required exercise was not validated, and the command that validates it."""
    return (f"needs a GPU (gpu = \"required\"): not graded without --gpus; validate it on a machine with an NVIDIA "
            f"GPU: `grader validate {name} --gpus all`")


def flavor_of_validation(ex: Exercise, gpus: GpuRequest | None) -> Flavor:
    """The flavour an exercise's validation grades in: cuda when GPUs are given and its policy takes them."""
    return Flavor.CUDA if gpus and ex.config.exercise.gpu is not GpuPolicy.NONE else Flavor.CPU


def parity_sample(items: list[tuple[CorpusFile, Path]]) -> list[tuple[CorpusFile, Path]]:
    """The reference, the stub and the first mutant by name: full marks, zero and a mix."""
    mutants = [pair for pair in items if pair[0].kind == "mutant"][:1]
    return [pair for pair in items if pair[0].kind in ("reference", "stub")] + mutants


def _disagreements(verdicts: list[Verdict], second: list[Verdict], sandbox: str, parity: str) -> list[str]:
    """One line per difference in the decision (a check, the score, a flag) on a file of the sample graded in the
    ``parity`` sandbox."""
    first = {(v.kind, v.path): v.report for v in verdicts}
    return [f"{v.path.name}: {parity} disagrees with {sandbox}: {difference}" for v in second
            for difference in decision_differences(first[v.kind, v.path], v.report, sides=(sandbox, parity))]


def _plan(ex: Exercise, solutions_dir: Path, more: bool,
          applied: Path) -> tuple[ExerciseValidation, list[tuple[CorpusFile, Path]]]:
    """The files to grade (each with the path ``grade()`` takes: a patch applied under ``applied``), and
    problems with the exercise itself found before grading anything (a patch that does not apply is one)."""
    result = ExerciseValidation(ex.name)
    items = corpus(ex, solutions_dir, more=more)
    if not items[0].path.is_file():
        result.problems.append(f"no reference solution at {items[0].path}")
        items = [item for item in items[1:] if not item.is_patch]
    if not any(item.kind == "mutant" for item in items):
        result.problems.append(f"no mutants in {solutions_dir / ex.name / 'mutants'}")
    result.problems += named_twice(items)
    planned = []
    for item in items:
        try:
            planned.append((item, item.gradable(applied)))
        except MutantPatchError as e:
            result.problems.append(str(e))  # names the patch, the hunk and the line
    return result, planned


def all_exercise_names() -> list[str]:
    return sorted(p.parent.name for p in EXERCISES_DIR.glob("*/exercise.toml"))
