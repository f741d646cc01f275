"""The batch driver with a stand-in engine: resume, retries, infra failures never stored as scores."""

from __future__ import annotations

import hashlib
from concurrent.futures import Future

import pytest
from click.testing import CliRunner

from grader.batch.items import analyse_exercise
from grader.batch.model import RowStatus
from grader.batch.runner import run_batch, version_key
from grader.batch.store import Key, Store
from grader.exercise import load_exercise
from grader.reports.model import CheckResult, Environment, Report, Status, Visibility
from grader.cli import main
from tests.conftest import TOY


class FakeEngine:
    """Answers each job with a scripted outcome: 'pass', 'fail', 'infra', or 'raise'."""

    def __init__(self, script=None):
        self.script = script or {}  # candidate -> list of outcomes, one per attempt
        self.calls: list[str] = []
        self.jobs = []

    def submit(self, job, *, num_gpus=0, on_start=None):
        if on_start is not None:
            on_start()
        self.calls.append(job.key.candidate)
        self.jobs.append(job)
        outcomes = self.script.get(job.key.candidate, ["pass"])
        outcome = outcomes[min(self.calls.count(job.key.candidate), len(outcomes)) - 1]
        future = Future()
        if outcome == "raise":
            future.set_exception(RuntimeError("worker lost"))
            return future
        version, fingerprint = job.key.exercise_version.split(";")[0].split("+")
        env = Environment(exercise_version=version, exercise_fingerprint=fingerprint, submission_sha256=job.key.sha256,
                          sandbox=job.sandbox, oci_runtime=job.runtime)  # as grade() records them
        if outcome == "infra":
            future.set_result(Report(exercise=job.key.exercise, graded=False, not_graded_reason="engine down",
                                     environment=env))
            return future
        if outcome == "check_error":  # as grade() leaves it: not graded, the checks kept
            broken = CheckResult(id="c", name="c", status=Status.CHECK_ERROR, score=0.0, max_score=6.0,
                                 visibility=Visibility.VISIBLE, message="the check's own code raised KeyError: 'x'")
            future.set_result(Report(exercise=job.key.exercise, graded=False, checks=[broken], environment=env,
                                     not_graded_reason="a check of this exercise raised an error of its own"))
            return future
        passed = outcome == "pass"
        check = CheckResult(id="c", name="c", status=Status.PASSED if passed else Status.FAILED,
                            score=6.0 if passed else 0.0, max_score=6.0, visibility=Visibility.VISIBLE)
        future.set_result(Report(exercise=job.key.exercise, graded=True, checks=[check], score=check.score,
                                 max_score=6.0, environment=env))
        return future


@pytest.fixture(autouse=True)
def no_runtime_from_the_machine(monkeypatch):
    """The driver resolves the runtime from $GRADER_RUNTIME when none is passed: these tests choose it."""
    monkeypatch.delenv("GRADER_RUNTIME", raising=False)


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
        def submit(self, job, *, num_gpus=0, on_start=None):
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


def test_the_runtime_is_resolved_once_and_every_job_carries_it(subs, store, monkeypatch):
    monkeypatch.setenv("GRADER_RUNTIME", "runsc")  # read by the driver, never by a worker
    engine = FakeEngine()
    run(subs, store, engine)
    assert [j.runtime for j in engine.jobs] == ["runsc"] * 3
    monkeypatch.setenv("GRADER_RUNTIME", "runc")
    local = FakeEngine()
    run(subs, store, local, sandbox="local", runtime="runsc")  # the local sandbox has no OCI runtime
    assert [j.runtime for j in local.jobs] == [None] * 3


def test_the_key_names_a_runtime_other_than_runc_and_runc_keeps_the_old_key():
    ex = load_exercise(TOY)
    old = f"{ex.version}+{ex.fingerprint[:16]}"
    assert version_key(ex) == version_key(ex, "runc") == old  # stores written before runtimes keep their rows
    assert version_key(ex, "runsc") == old + ";runtime=runsc"


def test_a_runc_result_is_not_reused_for_a_runsc_batch(subs, store):
    run(subs, store, FakeEngine(), runtime="runc")
    again = FakeEngine()
    batch = run(subs, store, again, runtime="runsc")
    assert sorted(again.calls) == ["ann", "ben", "cat"] and batch.reused == 0
    assert all(r.report.environment.oci_runtime == "runsc" for r in batch.rows)  # the rows are runsc's
    back = FakeEngine()
    assert run(subs, store, back, runtime="runc").reused == 3 and back.calls == []  # each runtime keeps its own


def test_a_worker_that_graded_under_another_runtime_is_not_trusted(subs, store):
    class Runc(FakeEngine):
        def submit(self, job, *, num_gpus=0, on_start=None):
            future = super().submit(job)
            future.result().environment.oci_runtime = "runc"
            return future

    rows = run(subs, store, Runc(), runtime="runsc", retries=0).rows
    assert all(r.status is RowStatus.NOT_GRADED and "OCI runtime runc" in r.reason and "runsc" in r.reason
               for r in rows)


def test_the_cli_refuses_an_unknown_runtime_name(tmp_path):
    r = CliRunner().invoke(main, ["batch", str(tmp_path), "--output", str(tmp_path / "out"), "--runtime", "kata"])
    assert r.exit_code == 2 and "kata" in r.output and "runsc" in r.output
    assert not (tmp_path / "out").exists()


def test_the_cli_checks_the_engine_knows_the_runtime_before_grading(subs, tmp_path, monkeypatch):
    from grader.backends import engine
    from grader.build import naming

    class Client:  # an engine with the image built and runc alone registered
        def info(self):
            return {"Runtimes": {"runc": {}}}

    monkeypatch.setattr(engine, "connect", lambda timeout=60: Client())
    monkeypatch.setattr(naming, "find_runtime_image", lambda client: object())
    r = CliRunner().invoke(main, ["batch", str(subs), "--output", str(tmp_path / "out"), "--runtime", "runsc",
                                  "--exercise-root", str(TOY.parent)])
    assert r.exit_code == 3 and "no 'runsc' runtime registered" in " ".join(r.output.split()), r.output
    assert not (tmp_path / "out" / "grader.sqlite").exists()  # nothing graded, nothing stored


# Stored rows are signed with the panel's key (grader.batch.store): one that does not verify is never reused.

def _tamper(store: Store, sql: str, *args) -> None:
    """Change the store as someone with the batch folder, but not the panel's key, could."""
    store.db.execute(sql, args)


def test_an_edited_stored_row_is_set_aside_and_graded_again_never_republished(subs, store):
    first = FakeEngine({"ann": ["fail"]})
    run(subs, store, first)
    forged = Report(exercise="toy", graded=True, score=6.0, max_score=6.0, checks=[CheckResult(
        id="c", name="c", status=Status.PASSED, score=6.0, max_score=6.0, visibility=Visibility.VISIBLE)])
    _tamper(store, "UPDATE gradings SET report=? WHERE candidate='ann'", forged.to_json())
    again = FakeEngine({"ann": ["fail"]})
    batch = run(subs, store, again)
    rows = {r.candidate: r for r in batch.rows}
    assert again.calls == ["ann"] and rows["ann"].score == 0  # graded again: the forged 6/6 is not shown
    assert [(s.candidate, s.seal.value) for s in batch.set_aside] == [("ann", "edited")]
    assert batch.set_aside_lines() == ["ann/toy: the stored result does not match its signature: it was edited "
                                       "after the batch stored it; set aside and graded again"]
    kept = store.db.execute("SELECT candidate, seal, report FROM set_aside").fetchall()
    assert [(c, s) for c, s, _ in kept] == [("ann", "edited")] and '"score": 6.0' in kept[0][2]  # the evidence


@pytest.mark.parametrize("change", ["signature=NULL", "signature=replace(signature, substr(signature, 13, 4), 'ffff')",
                                    "attempts=attempts+1", "candidate=candidate"])
def test_a_row_that_does_not_verify_is_never_reused(subs, store, change):
    """Unsigned, signed with another key (its id changed), any column changed: graded again. An untouched
    row (the last case) is reused."""
    run(subs, store, FakeEngine())
    _tamper(store, f"UPDATE gradings SET {change} WHERE candidate='ben'")
    again = FakeEngine()
    batch = run(subs, store, again)
    untouched = change == "candidate=candidate"
    assert again.calls == ([] if untouched else ["ben"])
    assert [s.seal.value for s in batch.set_aside] == (
        [] if untouched else ["unsigned" if "NULL" in change else "other_key" if "ffff" in change else "edited"])


def test_a_row_signed_with_another_machines_key_is_graded_again_and_counted(subs, tmp_path, monkeypatch):
    (tmp_path / "out").mkdir()
    first = Store(tmp_path / "out")
    run(subs, first, FakeEngine())
    first.close()
    monkeypatch.setenv("GRADER_KEY_FILE", str(tmp_path / "elsewhere" / "signing.key"))  # another panel member
    second = Store(tmp_path / "out")
    engine = FakeEngine()
    batch = run(subs, second, engine)
    second.close()
    assert sorted(engine.calls) == ["ann", "ben", "cat"]
    assert batch.set_aside_lines() == ["3 stored results not vouched for by this machine's key (signed with another "
                                       "key (another panel machine's, or forged)): graded again"]


def test_a_store_from_before_signing_gains_the_column_and_its_rows_are_graded_again(subs, tmp_path):
    import sqlite3

    old = sqlite3.connect(tmp_path / "grader.sqlite")
    old.executescript("""CREATE TABLE gradings (candidate TEXT NOT NULL, exercise TEXT NOT NULL, sha256 TEXT NOT NULL,
        exercise_version TEXT NOT NULL, source TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL,
        reason TEXT NOT NULL DEFAULT '', report TEXT, updated_at TEXT NOT NULL,
        PRIMARY KEY (candidate, exercise, sha256, exercise_version));""")
    old.close()
    store = Store(tmp_path)
    run(subs, store, FakeEngine())
    assert store.get(Key("ann", "toy", *_key_parts(store, "ann"))).trusted  # rows written now are signed
    store.close()


def _key_parts(store: Store, candidate: str) -> tuple[str, str]:
    return store.db.execute("SELECT sha256, exercise_version FROM gradings WHERE candidate=?", (candidate,)).fetchone()


def test_a_key_inside_the_batch_folder_is_refused(tmp_path, monkeypatch):
    from grader.errors import UsageError

    monkeypatch.setenv("GRADER_KEY_FILE", str(tmp_path / "out" / "signing.key"))
    (tmp_path / "out").mkdir()
    with pytest.raises(UsageError, match="inside the batch folder"):
        Store(tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []  # refused before a key (or a store) was made there


def test_local_results_are_never_republished_by_a_docker_batch(subs, store):
    """Graded with --sandbox local, rerun with Docker: everything is graded again (none "from earlier runs"),
    and each sandbox keeps its own rows."""
    run(subs, store, FakeEngine(), sandbox="local")
    docker = FakeEngine()
    batch = run(subs, store, docker)
    assert sorted(docker.calls) == ["ann", "ben", "cat"] and batch.reused == 0 and batch.graded_now == 3
    assert [r.sandbox for r in batch.rows] == ["docker"] * 3 and all(r.isolated for r in batch.rows)
    local = FakeEngine()
    batch = run(subs, store, local, sandbox="local")
    assert local.calls == [] and batch.reused == 3
    assert [r.sandbox for r in batch.rows] == ["local"] * 3 and "not_isolated" in batch.rows[0].flags


def test_a_local_result_stored_before_the_sandbox_was_keyed_is_not_reused_by_docker(subs, store):
    """An older store holds local results under the bare key Docker uses: the stored report's own record of
    its sandbox is checked, so it is graded again rather than republished as isolated."""
    ex = load_exercise(TOY)
    for name in ("ann", "ben", "cat"):
        sha = hashlib.sha256((subs / name / "toy" / "solution.py").read_bytes()).hexdigest()
        report = Report(exercise="toy", graded=True, score=6, max_score=6,
                        environment=Environment(sandbox="local", exercise_version=ex.version,
                                                exercise_fingerprint=ex.fingerprint))
        store.save_graded(Key(name, "toy", sha, version_key(ex)), f"{name}/toy/solution.py", report, 1)
    docker = FakeEngine()
    batch = run(subs, store, docker)
    assert sorted(docker.calls) == ["ann", "ben", "cat"] and batch.reused == 0
    assert [r.sandbox for r in batch.rows] == ["docker"] * 3


def test_the_key_names_the_local_sandbox():
    ex = load_exercise(TOY)
    assert version_key(ex, None, "local") == f"{ex.version}+{ex.fingerprint[:16]};sandbox=local"
    assert version_key(ex, "runc", "docker") == version_key(ex)


def test_a_check_error_is_kept_with_its_report_never_retried_and_not_regraded_until_the_checks_change(subs, store):
    engine = FakeEngine({"ann": ["check_error", "pass"]})
    batch = run(subs, store, engine, retries=2)
    rows = {r.candidate: r for r in batch.rows}
    assert engine.calls.count("ann") == 1  # the checks' own bug breaks the same way every time
    ann = rows["ann"]
    assert ann.status is RowStatus.CHECK_ERROR and ann.score is None and ann.report is not None
    assert ann.flags == ["check_error"] and "check error in c" in ann.reason and ann.scorecard
    again = FakeEngine()
    assert run(subs, store, again).reused == 3 and again.calls == []


def test_the_untouched_stub_is_its_own_row_scored_0(subs, store):
    (subs / "cat" / "toy" / "solution.py").write_bytes((TOY / "toy.py").read_bytes())
    rows = {r.candidate: r for r in run(subs, store, FakeEngine({"cat": ["fail"]})).rows}
    assert rows["cat"].status is RowStatus.UNTOUCHED_STUB and rows["cat"].score == 0
    assert "stub" in rows["cat"].reason and rows["ann"].status is RowStatus.GRADED
    items = analyse_exercise("toy", list(rows.values()))  # an attempt nobody made says nothing about a check
    assert items.graded == 2 and items.excluded == {"untouched_stub": 1}
