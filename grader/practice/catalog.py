"""The exercise catalog: what ``grader list`` and ``grader show`` say about each exercise.

Check counts and points come from *collecting* the checks the way a grading does
(``grader.host.collected``: the judge's pytest with ``--collect-only``, cached under the
exercise's fingerprint), never from reading their source.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader.errors import GraderError
from grader.exercise import EXERCISES_DIR, Exercise, load_exercise
from grader.host.collected import CheckCounts, CollectionFailed, cached_checks
from grader.progress import Work

LEVEL_ORDER = {"mid": 0, "senior": 1, "principal": 2}


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


def catalog(root: Path = EXERCISES_DIR, *, work: Work | None = None) -> Catalog:
    """Every exercise under ``root``, by level (mid, senior, principal) then by name.

    A folder whose exercise.toml is broken is reported in ``problems`` (the message
    names the file and the key) instead of hiding every other exercise behind a crash.
    ``work`` hears each exercise read (collecting its checks, when not cached, takes seconds).
    """
    infos, problems = [], []
    tomls = sorted(Path(root).glob("*/exercise.toml"))
    work = work or Work("reading exercises")
    work.plan(len(tomls))
    for toml in tomls:
        work.start(toml.parent.name)
        try:
            infos.append(describe(load_exercise(toml.parent)))
        except GraderError as e:
            problems.append(str(e))
        finally:
            work.finish(toml.parent.name)
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
