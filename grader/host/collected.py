"""The checks an exercise's judge collects, and what they count to: cached under the exercise's fingerprint.

Collecting runs the judge's pytest with ``--collect-only`` the way a grading runs it (a
parametrized check counts once per case), which opens no sandbox and runs no candidate
code. It costs seconds (the checks import torch and hypothesis), so the result is cached in
the data directory under the exercise's fingerprint: editing a check or exercise.toml
recollects, anything else is instant. A grading fills the cache for free
(:func:`remember_checks`); the judge's answers alone (an untouched stub, a file that does
not parse) and the catalog's counts (``grader list``, ``grader show``) read it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from grader import __version__
from grader.atomic import atomic_write
from grader.datadir import data_dir
from grader.exercise import Exercise
from grader.host.runner import grading_request, run_checks
from grader.reports.model import Visibility
from grader.wire.spec import CheckSpec

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
        """From the judge's "collected" event: one spec per check, as ``grader.judge.specs.check_spec`` makes it."""
        visible = sum(1 for s in specs if s.visibility is Visibility.VISIBLE)
        return cls(len(specs), visible, len(specs) - visible, float(sum(s.points for s in specs)))

    def summary(self) -> str:
        """``16 checks, 22 points: 4 visible, 12 hidden``, or ``? checks, ? points`` with the reason."""
        if not self.known:
            return f"? checks, ? points (could not count them: {self.problem})"
        return f"{self.total} checks, {self.points:g} points: {self.visible} visible, {self.hidden} hidden"


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
    asked = grading_request(ex, ex.stub, sandbox="local", seed=ex.config.checks.seed, grading_id="collect")
    run = run_checks(ex, asked, extra_args=("--collect-only",), timeout=COLLECT_TIMEOUT_S)
    if run.timed_out:
        raise CollectionFailed(f"collecting took longer than {COLLECT_TIMEOUT_S:g} s")
    if run.infra is not None:
        raise CollectionFailed(run.infra[:300])
    if not run.collected:
        tail = run.log_tail.strip().splitlines()[-1:]
        raise CollectionFailed("the judge collected nothing" + (f": {tail[0][:300]}" if tail else ""))
    return run.collected
