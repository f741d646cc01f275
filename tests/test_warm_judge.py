"""The warm judge server: a fresh forked judge per run, with the caller's environment, killable, restartable."""

from __future__ import annotations

import os
import signal
import time

import pytest

from grader.host import warm


@pytest.fixture
def checks(tmp_path):
    (tmp_path / "test_probe.py").write_text(
        "import os, time\n"
        "def test_env():\n"
        "    print('ENV=' + os.environ.get('GRADER_TEST_MARK', '-'), 'HASH=' + str(hash('stable')))\n"
        "def test_sleep():\n"
        "    if os.environ.get('GRADER_TEST_SLEEP'):\n"
        "        time.sleep(60)\n"
    )
    return tmp_path


def run(checks, *extra, timeout=60):
    log = checks / f"log-{time.monotonic_ns()}"
    judge = warm.start_judge([str(checks), "-q", "-s", "-p", "no:cacheprovider", *extra], cwd=str(checks), log=str(log))
    assert judge.wait(timeout), "the judge did not finish"
    return judge, log.read_text()


def test_each_judge_sees_the_environment_of_its_caller_and_a_fixed_hash_seed(checks, monkeypatch):
    _, first = run(checks, "-k", "env")
    monkeypatch.setenv("GRADER_TEST_MARK", "set-after-the-server-started")
    judge, second = run(checks, "-k", "env")
    assert judge.exitcode == 0
    assert "ENV=-" in first and "ENV=set-after-the-server-started" in second
    hashes = {line.split("HASH=")[1].split()[0] for line in (first + second).splitlines() if "HASH=" in line}
    assert len(hashes) == 1  # PYTHONHASHSEED=0 in the server: every judge hashes alike


def test_a_killed_judge_ends_and_its_process_is_gone(checks, monkeypatch):
    monkeypatch.setenv("GRADER_TEST_SLEEP", "1")
    judge = warm.start_judge([str(checks), "-q", "-p", "no:cacheprovider", "-k", "sleep"], cwd=str(checks),
                             log=str(checks / "log"))
    assert not judge.wait(2)  # still sleeping
    judge.kill()
    assert judge.done.is_set() and judge.exitcode == -signal.SIGKILL
    with pytest.raises(ProcessLookupError):
        os.kill(judge.pid, 0)


def test_a_dead_server_fails_its_judges_and_the_next_run_starts_a_new_one(checks, monkeypatch):
    run(checks, "-k", "env")
    old = warm._server
    monkeypatch.setenv("GRADER_TEST_SLEEP", "1")
    pending = warm.start_judge([str(checks), "-q", "-p", "no:cacheprovider", "-k", "sleep"], cwd=str(checks),
                               log=str(checks / "log"))
    pending.started.wait(10)
    old.proc.kill()
    assert pending.wait(10) and pending.exitcode == -1  # reported as ended, never left waiting
    monkeypatch.delenv("GRADER_TEST_SLEEP")
    judge, _ = run(checks, "-k", "env")
    assert judge.exitcode == 0 and warm._server is not old


def test_a_warm_server_reply_is_one_of_two_types_or_refused():
    import pydantic

    from grader.host import warm_wire

    assert isinstance(warm_wire.REPLY.validate_json(warm_wire.line(warm_wire.Forked(id="a", pid=7))), warm_wire.Forked)
    assert warm_wire.REPLY.validate_json(warm_wire.line(warm_wire.Ended(id="a", exit=3))).exit == 3
    for bad in (b'{"id": "a", "pid": 7}', b'{"id": "a", "kind": "forked", "pid": "7x"}',
                b'{"id": "a", "kind": "ended", "exit": 1, "pid": 2}'):
        with pytest.raises(pydantic.ValidationError):
            warm_wire.REPLY.validate_json(bad)
