"""A grading's sandbox started before its file is known (grader.backends.prestart): one per grading, the judge's
staged file and nothing else, removed whatever happens to the grading."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from grader.wire import protocol
from grader.exercise import Limits, load_exercise
from grader.backends import prestart
from grader.backends.docker_backend import container_kwargs
from grader.backends.staging import Staged, stage_base, stage_submission, worker_argv
from tests.conftest import TOY, tagged_containers

SUBMISSION = "def scale(x, factor):\n    return 'staged after the start'\n"


def test_the_base_stage_holds_no_submission_and_the_judge_adds_exactly_its_file(toy, tmp_path):
    staged = stage_base(probes=toy.probes, dest=tmp_path / "stage", shared=toy.shared)
    assert (staged.root / "lib/grader/sandbox/worker.py").is_file() and staged.probes.is_file()
    assert not staged.submission_dir.exists() and not (staged.root / "subset").exists()
    file = tmp_path / "mine.py"
    file.write_text(SUBMISSION)
    stage_submission(staged, submission=file, module_name="toy", guard={"allowed": []})
    assert (staged.submission_dir / "toy.py").read_bytes() == file.read_bytes()
    assert "restricted.load('toy'" in (staged.root / "subset" / "toy.py").read_text()
    assert (staged.submission_dir / "toy.py").stat().st_mode & 0o777 == 0o644
    assert not list(staged.root.rglob("*.partial"))


def test_a_container_started_ahead_lives_longer_and_waits_for_a_greet(tmp_path):
    limits = Limits(grading_timeout_s=100)
    plain = container_kwargs(image="i", staged=Staged(tmp_path), forbidden=[], limits=limits, grading_id="g")
    ahead = container_kwargs(image="i", staged=Staged(tmp_path), forbidden=[], limits=limits, grading_id="g",
                             ahead_s=100)
    assert plain["command"][plain["command"].index("--lifetime-s") + 1] == "160" and "--greet" not in plain["command"]
    assert ahead["command"][ahead["command"].index("--lifetime-s") + 1] == "260" and "--greet" in ahead["command"]
    assert "--greet" in worker_argv("python3", "/s", [], greet=True)


def _local_worker(toy, tmp_path, *frames: dict) -> list[dict]:
    """Start a local worker server with --greet, send ``frames`` (to the server itself), read every frame it
    sends until it ends (the server's own and its worker's)."""
    staged = stage_base(probes=toy.probes, dest=tmp_path / "stage", shared=toy.shared)
    argv = worker_argv(sys.executable, str(staged.root), [], greet=True)
    data = b"".join(protocol.encode(f, magic=protocol.SERVER_MAGIC) for f in frames)
    out = subprocess.run(argv, input=data, capture_output=True, timeout=120, cwd=tmp_path,
                         env={"PYTHONPATH": str(staged.lib), "TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"}).stdout
    frames_out, pos = [], 0

    def read(n):
        nonlocal pos
        chunk = out[pos:pos + n]
        pos += len(chunk)
        return chunk

    while pos < len(out):
        magic, length = protocol.read_header(read)
        frames_out.append(protocol.decode(protocol.read_exactly(read, length)))
    return frames_out


def test_a_worker_started_ahead_says_hello_only_when_greeted_and_reads_the_file_at_its_first_call(toy, tmp_path):
    # The file is staged after the worker started and before the first call: the call sees it.
    frames = _local_worker(toy, tmp_path, {"type": "greet"}, {"type": "shutdown"})
    assert [f["type"] for f in frames] == ["worker", "hello"]
    frames = _local_worker(toy, tmp_path / "b", {"type": "fresh"})
    assert [f["type"] for f in frames] == ["fatal"] and "expected a greet" in frames[0]["message"]


@pytest.mark.docker
def test_the_sandbox_started_before_the_file_is_written_grades_exactly_the_staged_file(
        docker_client, container_tag, toy, tmp_path, no_leftover_containers):
    from grader.backends.factory import open_sandbox

    pre = prestart.start(toy)
    handed = pre.handoff()
    assert handed is not None, pre.error
    container_id, stage = handed
    assert not (stage / "submission").exists()  # started before the file was known
    assert tagged_containers(docker_client, container_tag) == {container_id}
    file = tmp_path / "toy.py"
    file.write_text(SUBMISSION)
    box, _ = open_sandbox("docker", exercise=toy, submission=file, workdir=tmp_path / "w",
                          grading_id=pre.grading_id, prestarted=handed)
    try:
        result = box.call("scale", [2, 3])
        assert result.ok and result.value == "staged after the start"
        assert box._worker.transport.server.transport.container.id == container_id  # taken over, not a second one
        assert box.starts == 1 and tagged_containers(docker_client, container_tag) == {container_id}
    finally:
        box.close()
        pre.discard()
    assert not Path(pre.folder.name).exists()


@pytest.mark.docker
def test_a_prestarted_sandbox_of_a_cancelled_grading_is_removed(docker_client, container_tag, toy,
                                                                no_leftover_containers):
    pre = prestart.start(toy)
    assert pre.handoff() is not None, pre.error
    assert tagged_containers(docker_client, container_tag) == {pre.container_id}
    pre.discard()  # the grading never reached its judge
    assert tagged_containers(docker_client, container_tag) == set()
    prestart.start_next(toy)  # a batch's next grading, which never comes
    prestart.close_waiting()
    assert tagged_containers(docker_client, container_tag) == set()


@pytest.mark.docker
def test_no_sandbox_serves_two_submissions(docker_client, container_tag, toy, tmp_path, no_leftover_containers):
    from grader.backends.docker_backend import attach_starter

    prestart.start_next(toy)
    first = prestart.take(toy)
    second = prestart.take(toy)  # nothing waits any more: a container of its own
    try:
        assert first.grading_id != second.grading_id and first.stage != second.stage
        assert first.handoff()[0] != second.handoff()[0]
        # A judge takes over only its own grading's container.
        with pytest.raises(RuntimeError, match="not a sandbox started for grading"):
            attach_starter(docker_client, first.container_id, second.grading_id)()
    finally:
        first.discard()
        second.discard()


@pytest.mark.docker
@pytest.mark.slow
def test_a_batch_grading_takes_the_sandbox_started_during_the_previous_one(docker_client, container_tag,
                                                                        no_leftover_containers):
    from grader.host.grading import grade

    solution = TOY / "solution.py"
    try:
        first = grade(TOY, solution, sandbox="docker", start_next=True)
        waiting = prestart._waiting.pre
        assert waiting is not None and waiting.key[:2] == (str(TOY), load_exercise(TOY).fingerprint)
        assert waiting.handoff() is not None  # started while the first grading ran
        assert tagged_containers(docker_client, container_tag) == {waiting.container_id}  # the first one's is gone
        second = grade(TOY, solution, sandbox="docker")
        assert prestart._waiting.pre is None  # taken by the second grading, which started none
    finally:
        prestart.close_waiting()
    assert first.score == first.max_score > 0 and second.score == second.max_score
    assert tagged_containers(docker_client, container_tag) == set()


def test_a_batch_starts_the_next_sandbox_ahead_only_with_a_core_to_spare(monkeypatch):
    from grader.batch import engines
    from grader.batch.jobs import Job
    from grader.batch.store import Key

    seen = []
    monkeypatch.setattr(engines, "_started_then_graded", lambda job, on_start: seen.append(job.start_next))
    monkeypatch.setattr(prestart, "usable_cores", lambda: 2)
    job = Job(key=Key("cand", "toy", "0" * 64, "1.0.0"), exercise_root=str(TOY), filename="toy.py", source=b"")
    for jobs in (1, 2):
        engine = engines.LocalEngine(jobs)
        engine.submit(job).result()
        engine.submit(Job(**{**job.__dict__, "sandbox": "local"})).result()
        engine.close()
    assert seen == [True, False, False, False]  # docker with a spare core; never local; never every core busy


def test_a_file_the_judge_answers_alone_starts_no_sandbox(monkeypatch):
    from grader.host.grading import grade

    def refuse(*args, **kwargs):
        raise AssertionError("a sandbox was started for a file no sandbox grades")

    monkeypatch.setattr(prestart, "start", refuse)
    report = grade(TOY, TOY / "toy.py", sandbox="docker")  # the untouched stub
    assert report.untouched_stub and report.environment.sandbox == "none"


@pytest.mark.docker
def test_a_grading_stopped_before_its_judge_ends_removes_its_prestarted_sandbox(
        docker_client, container_tag, monkeypatch, no_leftover_containers):
    from grader.host import grading

    taken = []

    def interrupted(exercise, asked, **kwargs):
        taken.append(asked.prestarted)
        raise KeyboardInterrupt  # Ctrl-C while the judge runs

    monkeypatch.setattr(grading, "run_checks", interrupted)
    with pytest.raises(KeyboardInterrupt):
        grading.grade(TOY, TOY / "solution.py", sandbox="docker")
    assert taken and taken[0] is not None  # it had been started, and handed on
    assert tagged_containers(docker_client, container_tag) == set()
    assert not Path(taken[0].stage).exists()  # its staged folder is gone too
