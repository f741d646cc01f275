"""The batch driver with a stand-in engine: resume, retries, infra failures never stored as scores."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from grader.batch.model import RowStatus
from grader.batch.runner import run_batch, version_key
from grader.batch.store import Key, Store
from grader.exercise import load_exercise
from grader.reports.model import CheckResult, Environment, Report, Status, Visibility
from tests.conftest import TOY


class FakeEngine:
    """Answers each job with a scripted outcome: 'pass', 'fail', 'infra', or 'raise'."""

    def __init__(self, script=None):
        self.script = script or {}  # candidate -> list of outcomes, one per attempt
        self.calls: list[str] = []

    def submit(self, job, *, num_gpus=0):
        self.calls.append(job.key.candidate)
        outcomes = self.script.get(job.key.candidate, ["pass"])
        outcome = outcomes[min(self.calls.count(job.key.candidate), len(outcomes)) - 1]
        future = Future()
        if outcome == "raise":
            future.set_exception(RuntimeError("worker lost"))
            return future
        version, fingerprint = job.key.exercise_version.split("+")
        env = Environment(exercise_version=version, exercise_fingerprint=fingerprint, submission_sha256=job.key.sha256)
        if outcome == "infra":
            future.set_result(Report(exercise=job.key.exercise, graded=False, not_graded_reason="engine down",
                                     environment=env))
            return future
        passed = outcome == "pass"
        check = CheckResult(id="c", name="c", status=Status.PASSED if passed else Status.FAILED,
                            score=6.0 if passed else 0.0, max_score=6.0, visibility=Visibility.VISIBLE)
        future.set_result(Report(exercise=job.key.exercise, graded=True, checks=[check], score=check.score,
                                 max_score=6.0, environment=env))
        return future


@pytest.fixture
def subs(tmp_path):
    root = tmp_path / "subs"
    for name in ("ann", "ben", "cat"):
        (root / name / "toy").mkdir(parents=True)
        (root / name / "toy" / "solution.py").write_text(f"# {name}\ndef scale(x, k):\n    return x * k\n")
    return root


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path)
    yield s
    s.close()


def run(subs, store, engine, **kw):
    return run_batch(subs, store, engine, exercises={"toy": load_exercise(TOY)}, **kw)


def test_a_rerun_grades_only_what_is_new_or_changed(subs, store):
    first = FakeEngine()
    batch = run(subs, store, first)
    assert sorted(first.calls) == ["ann", "ben", "cat"] and batch.graded_now == 3 and batch.reused == 0

    (subs / "ben" / "toy" / "solution.py").write_text("def scale(x, k):\n    return k * x\n")  # changed
    (subs / "dan" / "toy").mkdir(parents=True)
    (subs / "dan" / "toy" / "solution.py").write_text("def scale(x, k):\n    return x * k  # new\n")
    second = FakeEngine()
    batch = run(subs, store, second)
    assert sorted(second.calls) == ["ben", "dan"] and batch.reused == 2
    assert [r.status for r in batch.rows] == [RowStatus.GRADED] * 4


def test_an_infrastructure_failure_is_retried_then_stored_as_not_graded_never_as_a_score(subs, store):
    engine = FakeEngine({"ann": ["infra", "infra", "infra"], "ben": ["infra", "pass"], "cat": ["raise", "pass"]})
    batch = run(subs, store, engine, retries=2)
    rows = {r.candidate: r for r in batch.rows}
    assert engine.calls.count("ann") == 3  # one try and two retries, no more
    assert rows["ann"].status is RowStatus.NOT_GRADED and rows["ann"].score is None
    assert "engine down" in rows["ann"].reason and "rerun" in rows["ann"].reason
    assert rows["ben"].status is RowStatus.GRADED and rows["ben"].score == 6 and rows["ben"].attempts == 2
    assert rows["cat"].status is RowStatus.GRADED  # a lost worker is infrastructure too

    # the next run tries the not-graded one again, and only that one
    again = FakeEngine()
    batch = run(subs, store, again)
    assert again.calls == ["ann"]
    assert {r.candidate: r.status for r in batch.rows}["ann"] is RowStatus.GRADED


def test_a_failing_check_is_a_score_not_a_retry(subs, store):
    engine = FakeEngine({"ann": ["fail"]})
    rows = {r.candidate: r for r in run(subs, store, engine).rows}
    assert engine.calls.count("ann") == 1 and rows["ann"].score == 0 and rows["ann"].status is RowStatus.GRADED


def test_a_worker_with_other_exercise_files_is_not_trusted(subs, store):
    class OtherVersion(FakeEngine):
        def submit(self, job, *, num_gpus=0):
            future = super().submit(job)
            future.result().environment.exercise_fingerprint = "f" * 16
            return future

    rows = run(subs, store, OtherVersion(), retries=0).rows
    assert all(r.status is RowStatus.NOT_GRADED and "version" in r.reason for r in rows)


def test_results_are_keyed_by_content_and_exercise_version(subs, store):
    run(subs, store, FakeEngine())
    ex = load_exercise(TOY)
    sha = __import__("hashlib").sha256((subs / "ann" / "toy" / "solution.py").read_bytes()).hexdigest()
    stored = store.get(Key("ann", "toy", sha, version_key(ex)))
    assert stored is not None and stored.status == "graded" and stored.report.score == 6
    assert store.get(Key("ann", "toy", sha, "0.0.0+deadbeef")) is None  # another version: not reused
