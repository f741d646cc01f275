"""The catalog: real metadata, counts collected like a grading, cached by fingerprint, broken folders reported."""

import json
import shutil
from pathlib import Path

import pytest

from grader.exercise import EXERCISES_DIR, load_exercise
from grader.practice import catalog as catalog_mod
from grader.practice.catalog import CheckCounts, catalog, describe
from grader.host import collected
from grader.host.collected import CollectionFailed

REPO = Path(__file__).resolve().parent.parent
TOY = REPO / "tests" / "fixtures" / "toy"
NAMES = sorted(p.parent.name for p in EXERCISES_DIR.glob("*/exercise.toml"))


@pytest.fixture
def exercise_root(tmp_path):
    """A private exercise root holding a copy of the toy exercise (3 checks, 6 points, 1 hidden)."""
    root = tmp_path / "exercises"
    shutil.copytree(TOY, root / "toy", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _no_collecting(monkeypatch):
    def fail(ex):
        raise AssertionError(f"collected {ex.name} again instead of reading the cache")

    monkeypatch.setattr(collected, "collect_checks", fail)


def test_every_exercise_with_its_metadata_by_level_then_name():
    found = catalog()
    assert found.problems == []
    assert sorted(i.name for i in found.exercises) == NAMES
    order = [catalog_mod.LEVEL_ORDER[i.level] for i in found.exercises]
    assert order == sorted(order)
    for info in found.exercises:
        meta = load_exercise(info.name).config.exercise
        assert (info.title, info.level, list(info.topics), info.gpu, info.submission) == (
            meta.title, meta.level, meta.topics, meta.gpu.value, meta.submission)
        assert info.checks.known and info.checks.total == info.checks.visible + info.checks.hidden
    mid = [i.name for i in found.exercises if i.level == "mid"]
    assert mid == sorted(mid)


def test_points_and_counts_are_what_grading_the_reference_scores():
    from grader.host.grading import grade

    ex = load_exercise("collate_fn")
    counts = describe(ex).checks
    report = grade(ex, REPO / "solutions" / "collate_fn" / "collate.py", sandbox="local")
    assert report.graded and report.score == report.max_score
    assert counts.points == report.max_score
    assert counts.total == len(report.checks)  # parametrized cases count one each, as in grading
    assert counts.visible == sum(c.visibility.value == "visible" for c in report.checks)


def test_counts_are_cached_by_fingerprint(exercise_root, monkeypatch):
    first = describe(load_exercise(exercise_root / "toy")).checks
    assert first == CheckCounts(total=3, visible=2, hidden=1, points=6.0)
    _no_collecting(monkeypatch)
    assert describe(load_exercise(exercise_root / "toy")).checks == first  # from the cache, no judge


def test_an_edited_check_is_collected_again(exercise_root, monkeypatch):
    describe(load_exercise(exercise_root / "toy"))
    checks = exercise_root / "toy" / "checks" / "test_toy.py"
    checks.write_text(checks.read_text() + "\n\n@pytest.mark.points(4)\ndef test_extra(sandbox):\n    pass\n")
    seen = []
    real = collected.collect_checks
    monkeypatch.setattr(collected, "collect_checks", lambda ex: seen.append(ex.name) or real(ex))
    counts = describe(load_exercise(exercise_root / "toy")).checks  # a new fingerprint
    assert seen == ["toy"] and (counts.total, counts.points) == (4, 10.0)


def test_a_collection_that_fails_gives_unknown_counts_and_is_retried(exercise_root, monkeypatch):
    real = collected.collect_checks

    def broken(ex):
        raise CollectionFailed("judge exploded")

    monkeypatch.setattr(collected, "collect_checks", broken)
    counts = describe(load_exercise(exercise_root / "toy")).checks
    assert not counts.known and counts.points is None
    assert counts.summary().startswith("? checks, ? points") and "judge exploded" in counts.summary()
    monkeypatch.setattr(collected, "collect_checks", real)
    assert describe(load_exercise(exercise_root / "toy")).checks.points == 6.0  # the failure was not cached


def test_checks_that_do_not_import_are_unknown_not_a_crash(exercise_root):
    (exercise_root / "toy" / "checks" / "test_broken.py").write_text("def test_x(:\n")
    counts = describe(load_exercise(exercise_root / "toy")).checks
    assert not counts.known and "test_broken.py" in counts.problem


def test_a_broken_exercise_toml_is_reported_and_the_rest_listed(exercise_root):
    bad = exercise_root / "bad"
    shutil.copytree(exercise_root / "toy", bad)
    (bad / "exercise.toml").write_text("[exercise\nname = 'bad'\n")
    found = catalog(exercise_root)
    assert [i.name for i in found.exercises] == ["toy"]
    assert len(found.problems) == 1 and str(bad / "exercise.toml") in found.problems[0]



def test_collecting_opens_no_sandbox(pytester, tmp_path, monkeypatch):
    # A docker sandbox with no engine behind it: opening one would report "not graded" (an infra event).
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    events = tmp_path / "events.jsonl"
    pytester.runpytest_subprocess(
        str(TOY / "checks"), "--confcutdir", str(TOY / "checks"),  # as a grading runs it: no conftest of ours
        "-p", "grader.judge.plugin", "--collect-only", "--grader-exercise", str(TOY),
        "--grader-submission", str(TOY / "toy.py"), "--grader-sandbox", "docker", "--grader-events", str(events))
    kinds = [json.loads(line)["event"] for line in events.read_text().splitlines()]
    assert kinds == ["collected", "finished"]
