"""The exercise catalog: what ``grader list`` and ``grader show`` say about each exercise.

Check counts and points come from *collecting* the checks the way a grading does
(a parametrized check counts once per case), never from reading their source: the
judge's pytest runs with ``--collect-only``, which opens no sandbox and runs no
candidate code. Collecting costs seconds (the checks import torch and hypothesis),
so the counts are cached in the data directory under the exercise's fingerprint:
editing a check or exercise.toml recollects, anything else is instant.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from grader import __version__
from grader.atomic import atomic_write
from grader.errors import GraderError
from grader.exercise import EXERCISES_DIR, Exercise, load_exercise
from grader.judge.runner import run_checks
from grader.wire.spec import CheckSpec
from grader.practice.datadir import data_dir
from grader.reports.model import Visibility

LEVEL_ORDER = {"mid": 0, "senior": 1, "principal": 2}
#: Collecting imports the checks, nothing more; a judge still busy after this is stuck.
COLLECT_TIMEOUT_S = 120.0
CACHE_FOLDER = "catalog"


class CollectionFailed(Exception):
    """The checks could not be collected; the message says why (shown as the reason counts are "?")."""


@dataclass(frozen=True)
class CheckCounts:
    """How many checks an exercise has and what they are worth; ``None`` everywhere when unknown."""

    total: int | None
    visible: int | None
    hidden: int | None
    points: float | None
    problem: str | None = None  # why the counts are unknown

    @property
    def known(self) -> bool:
        return self.total is not None

    @classmethod
    def unknown(cls, problem: str) -> CheckCounts:
        return cls(None, None, None, None, problem)

    @classmethod
    def from_specs(cls, specs: list[CheckSpec]) -> CheckCounts:
        """From the judge's "collected" event: one spec per check, as ``grader.judge.plugin._spec`` makes it."""
        visible = sum(1 for s in specs if s.visibility is Visibility.VISIBLE)
        return cls(len(specs), visible, len(specs) - visible, float(sum(s.points for s in specs)))

    def summary(self) -> str:
        """``16 checks, 22 points: 4 visible, 12 hidden``, or ``? checks, ? points`` with the reason."""
        if not self.known:
            return f"? checks, ? points (could not count them: {self.problem})"
        return f"{self.total} checks, {self.points:g} points: {self.visible} visible, {self.hidden} hidden"


@dataclass(frozen=True)
class ExerciseInfo:
    name: str
    title: str
    level: str
    topics: tuple[str, ...]
    gpu: str
    submission: str
    checks: CheckCounts


@dataclass(frozen=True)
class Catalog:
    """The exercises that loaded, in listing order, and one message per folder that did not."""

    exercises: list[ExerciseInfo]
    problems: list[str]


def catalog(root: Path = EXERCISES_DIR) -> Catalog:
    """Every exercise under ``root``, by level (mid, senior, principal) then by name.

    A folder whose exercise.toml is broken is reported in ``problems`` (the message
    names the file and the key) instead of hiding every other exercise behind a crash.
    """
    infos, problems = [], []
    for toml in sorted(Path(root).glob("*/exercise.toml")):
        try:
            ex = load_exercise(toml.parent)
        except GraderError as e:
            problems.append(str(e))
            continue
        infos.append(describe(ex))
    infos.sort(key=lambda i: (LEVEL_ORDER.get(i.level, len(LEVEL_ORDER)), i.name))
    return Catalog(infos, problems)


def describe(ex: Exercise) -> ExerciseInfo:
    """What the catalog says about one exercise; collects its checks unless cached."""
    meta = ex.config.exercise
    return ExerciseInfo(name=ex.name, title=ex.title, level=meta.level, topics=tuple(meta.topics),
                        gpu=meta.gpu.value, submission=meta.submission, checks=check_counts(ex))


def check_counts(ex: Exercise) -> CheckCounts:
    """The cached counts for this exact exercise content, or collect them (a failure is not cached: rerun retries)."""
    try:
        return CheckCounts.from_specs(cached_checks(ex))
    except CollectionFailed as e:
        return CheckCounts.unknown(str(e))


def cached_checks(ex: Exercise) -> list[CheckSpec]:
    """The exercise's checks as its judge collects them, from the cache keyed by its fingerprint, or collected
    now and cached. What the judge answers alone (an untouched stub, a file that does not parse) lists these."""
    cache = data_dir() / CACHE_FOLDER / f"{ex.fingerprint}.json"
    cached = _read_cache(cache)
    if cached is not None:
        return cached
    specs = collect_checks(ex)  # CollectionFailed is not cached: the next run collects again
    remember_checks(ex, specs)
    return specs


def remember_checks(ex: Exercise, specs: list[CheckSpec]) -> None:
    """Cache what a judge collected for ``ex`` (a grading collects them too: it fills the cache for free)."""
    cache = data_dir() / CACHE_FOLDER / f"{ex.fingerprint}.json"
    if _read_cache(cache) == specs:
        return
    with atomic_write(cache) as f:
        json.dump({"grader_version": __version__, "exercise": ex.name,
                   "counts": asdict(CheckCounts.from_specs(specs)),
                   "checks": [s.model_dump(mode="json") for s in specs]}, f)


def _read_cache(path: Path) -> list[CheckSpec] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("grader_version") != __version__:  # the plugin's counting may have changed
            return None
        return [CheckSpec.model_validate(spec) for spec in data["checks"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # missing, damaged or from before specs were kept: collect again


def collect_checks(ex: Exercise) -> list[CheckSpec]:
    """The judge's check specs for ``ex``: its pytest with ``--collect-only``, run as a grading runs it."""
    # --collect-only opens no sandbox (the plugin returns before it would): the kind is only named.
    run = run_checks(ex, ex.stub, sandbox="local", seed=ex.config.checks.seed, grading_id="collect",
                     extra_args=("--collect-only",), timeout=COLLECT_TIMEOUT_S)
    if run.timed_out:
        raise CollectionFailed(f"collecting took longer than {COLLECT_TIMEOUT_S:g} s")
    if run.infra is not None:
        raise CollectionFailed(run.infra.strip().splitlines()[0][:300])
    if not run.collected:
        tail = run.log_tail.strip().splitlines()[-1:]
        raise CollectionFailed("the judge collected nothing" + (f": {tail[0][:300]}" if tail else ""))
    return run.collected
