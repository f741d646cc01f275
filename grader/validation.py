"""Prove an exercise's checks: the reference earns full marks, the stub zero, every mutant loses points.

``solutions/<name>/`` holds the reference (``<submission file>``), ``variants/``
(other correct answers, written differently: each must also earn full marks),
``mutants/`` (plausible wrong answers: each must lose points; CI grades these) and
``more_mutants/`` (more of the same, graded with ``--more``: each grading costs
seconds, so CI keeps a curated set in which every catching check is exercised). A grading that
was not graded is a failure of the validation too, named as such, never a pass.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from grader.exercise import EXERCISES_DIR, REPO_ROOT, Exercise, load_exercise
from grader.grading import grade
from grader.reports.model import Report, Status

SOLUTIONS_DIR = REPO_ROOT / "solutions"


@dataclass
class Verdict:
    kind: str  # reference | variant | stub | mutant
    path: Path
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
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems and all(v.ok for v in self.verdicts)

    def catches(self) -> dict[str, list[str]]:
        """Check name -> the mutants it catches (loses points on), in the reference's check order."""
        out: dict[str, list[str]] = {}
        reference = next((v for v in self.verdicts if v.kind == "reference"), None)
        if reference is not None:
            out = {c.name: [] for c in reference.report.checks}
        for v in self.verdicts:
            if v.kind == "mutant":
                for c in v.report.checks:
                    if c.status is not Status.SKIPPED and c.score < c.max_score:
                        out.setdefault(c.name, []).append(v.path.stem)
        return out


def corpus(ex: Exercise, solutions_dir: Path = SOLUTIONS_DIR, *, more: bool = False) -> list[tuple[str, Path | None]]:
    """What to grade for ``ex``: ``(kind, path)``; the stub is ``None`` (the exercise's own file)."""
    root = solutions_dir / ex.name
    items: list[tuple[str, Path | None]] = [("reference", root / ex.config.exercise.submission), ("stub", None)]
    items += [("variant", p) for p in sorted((root / "variants").glob("*.py"))]
    for folder in ("mutants", "more_mutants") if more else ("mutants",):
        items += [("mutant", p) for p in sorted((root / folder).glob("*.py"))]
    return items


def _judge(kind: str, report: Report) -> str | None:
    if not report.graded:
        return f"not graded: {report.not_graded_reason}"
    lost = [f"{c.name} ({c.status.value}: {c.message[:120]})" for c in report.checks
            if c.status is not Status.SKIPPED and c.score < c.max_score]
    if kind in ("reference", "variant"):
        if lost:
            return "lost points on " + "; ".join(lost)
        if report.forbidden:
            return "uses forbidden " + ", ".join(sorted({h.api for h in report.forbidden}))
    elif kind == "stub" and report.score != 0:
        earned = [c.name for c in report.checks if c.score > 0]
        return f"the untouched stub earns {report.score:g} points on: " + "; ".join(earned)
    elif kind == "mutant" and report.score >= report.max_score:
        return "caught by no check (full marks)"
    return None


def validate_exercise(spec: str | Path | Exercise, *, sandbox: str = "docker", jobs: int = 1,
                      seed: int | None = None, solutions_dir: Path = SOLUTIONS_DIR,
                      more: bool = False) -> ExerciseValidation:
    t0 = time.perf_counter()
    ex = spec if isinstance(spec, Exercise) else load_exercise(spec)
    result = ExerciseValidation(ex.name)
    items = corpus(ex, solutions_dir, more=more)
    if not items[0][1].is_file():
        result.problems.append(f"no reference solution at {items[0][1]}")
        items = items[1:]
    if not any(kind == "mutant" for kind, _ in items):
        result.problems.append(f"no mutants in {solutions_dir / ex.name / 'mutants'}")

    def run(item):
        kind, path = item
        report = grade(ex, path, sandbox=sandbox, seed=seed)
        return Verdict(kind, path or ex.stub, report, _judge(kind, report))

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:  # each grading is its own process
        result.verdicts = list(pool.map(run, items))
    undocumented = {w for v in result.verdicts for w in v.report.warnings if "has no docstring" in w}
    result.problems += sorted(undocumented)
    result.duration_s = round(time.perf_counter() - t0, 2)
    return result


def all_exercise_names() -> list[str]:
    return sorted(p.parent.name for p in EXERCISES_DIR.glob("*/exercise.toml"))
