"""``grader batch`` end to end in Docker, on the toy exercise: outputs, resume, kill -9, refusals."""

from __future__ import annotations

import csv
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from tests.conftest import REPO, TOY, tagged_containers, toy_with_deadlines
from tests.proc import descendants, sigint_as_a_terminal_gives_it, still_alive_after

SOLUTIONS = REPO / "tests" / "fixtures" / "toy_solutions" / "toy"
ROOT = TOY.parent  # --exercise-root: the folder holding the toy exercise


def make_submissions(root: Path) -> Path:
    files = {"ann": SOLUTIONS / "toy.py", "ben": SOLUTIONS / "mutants" / "uses_mul.py",
             "cat": SOLUTIONS / "variants" / "loop.py"}
    for name, src in files.items():
        (root / name / "toy").mkdir(parents=True)
        (root / name / "toy" / "toy.py").write_bytes(src.read_bytes())
    (root / "dee" / "toy").mkdir(parents=True)
    (root / "dee" / "toy" / "toy.py").write_text("def scale(x, k:\n")  # not Python
    (root / "eve").mkdir()  # no exercise folder at all
    (root / "README.txt").write_text("stray")
    return root


#: Graded last (candidates go in name order, one at a time): every call sleeps past its deadline (20 s for
#: the first), so the batch is surely still running when the test stops it, however busy the machine.
#: Blocks for good without a `time` import (outside the language subset: it would never run).
SLEEPER = "import torch\n\n\ndef scale(x, factor):\n    torch.futures.Future().wait()  # never set: blocks, no CPU\n"


def with_sleeper(subs: Path) -> Path:
    (subs / "zed" / "toy").mkdir(parents=True)
    (subs / "zed" / "toy" / "toy.py").write_text(SLEEPER)
    return subs


def patient_root(tmp_path: Path) -> Path:
    """An exercise root whose toy lets a call run 20 s, so the sleeper's grading outlasts the test's reaction."""
    toy_with_deadlines(tmp_path / "root" / "toy", call_timeout_s=20, grading_timeout_s=300)
    return tmp_path / "root"


def batch(*args):
    return CliRunner().invoke(main, ["batch", *map(str, args), "--exercise-root", str(ROOT)], catch_exceptions=False)


@pytest.mark.docker
def test_batch_grades_every_candidate_and_writes_the_panel_folder(tmp_path, no_leftover_containers):
    subs, out = make_submissions(tmp_path / "subs"), tmp_path / "out"
    result = batch(subs, "--output", out, "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert "README.txt" in result.output  # the stray file is reported, not fatal

    with open(out / "summary.csv", newline="") as f:
        rows = {r["candidate"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"ann", "ben", "cat", "dee", "eve"}
    assert rows["ann"]["status"] == "graded" and rows["ann"]["score"] == rows["ann"]["max_score"] != ""
    assert rows["cat"]["score"] == rows["ann"]["score"]  # a different correct solution: the same full marks
    assert rows["ben"]["status"] == "graded" and float(rows["ben"]["score"]) < float(rows["ben"]["max_score"])
    assert rows["dee"]["status"] == "invalid" and rows["dee"]["score"] == "0" and "line 1" in rows["dee"]["reason"]
    assert rows["eve"]["status"] == "missing" and rows["eve"]["score"] == ""
    assert rows["ann"]["sandbox"] == "docker" and rows["eve"]["sandbox"] == ""  # where each row was graded

    lines = {x["candidate"]: x for x in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert "forbidden" in lines["ben"]["flags"]
    assert (lines["ann"]["sandbox"], lines["ann"]["isolated"]) == ("docker", True)
    for name in ("ann", "ben", "cat", "dee"):
        cards = out / "candidates" / name
        assert (cards / "toy.html").is_file() and (cards / "toy" / "results.json").is_file()
        report = json.loads((cards / "toy.json").read_text())
        assert report["environment"]["submission_sha256"] == lines[name]["sha256"]
    index = (out / "index.html").read_text()
    assert "candidates/ann/toy.html" in index and (out / "similarity.html").is_file()
    with open(out / "items.csv", newline="") as f:  # 3 graded of 5: the checks are listed, no figure is shown
        items = list(csv.DictReader(f))
    assert items and {r["exercise"] for r in items} == {"toy"} and all(r["discrimination"] == "" for r in items)

    again = batch(subs, "--output", out, "--jobs", "2")  # nothing new: nothing graded again
    assert again.exit_code == 0 and "Graded now: 0, from earlier runs: 4" in " ".join(again.output.split())


def test_an_output_folder_holding_other_files_is_refused_and_left_alone(tmp_path):
    subs = make_submissions(tmp_path / "subs")
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    result = batch(subs, "--output", out)
    assert result.exit_code == 2 and "did not write" in result.output
    assert [p.name for p in out.iterdir()] == ["mine.txt"] and (out / "mine.txt").read_text() == "keep me"

    inside = batch(subs, "--output", subs / "results")
    assert inside.exit_code == 2 and "inside the submissions" in inside.output and not (subs / "results").exists()


def test_an_unknown_exercise_in_the_option_is_a_usage_error(tmp_path):
    result = batch(make_submissions(tmp_path / "subs"), "--output", tmp_path / "out", "--exercises", "toy,nope")
    assert result.exit_code == 2 and "nope" in result.output and not (tmp_path / "out").exists()


def test_no_engine_is_not_graded_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    result = batch(make_submissions(tmp_path / "subs"), "--output", tmp_path / "out")
    assert result.exit_code == 3 and "not graded" in result.output


@pytest.mark.docker
def test_a_batch_killed_mid_run_finishes_on_rerun_with_each_submission_graded_once(tmp_path, docker_client, container_tag):
    subs, out = with_sleeper(make_submissions(tmp_path / "subs")), tmp_path / "out"
    argv, proc, started = _batch_with_one_result_stored(subs, out, patient_root(tmp_path), stderr=subprocess.DEVNULL)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    stored_before = _stored(out)
    assert 1 <= stored_before <= 4, stored_before  # the sleeper's grading was running: never stored
    assert not still_alive_after(started), "a judge or the judge server outlived the killed batch"

    (subs / "zed" / "toy" / "toy.py").write_bytes((SOLUTIONS / "toy.py").read_bytes())  # graded in seconds now
    rerun = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    said = " ".join(rerun.stderr.split())
    assert f"Graded now: {5 - stored_before}, from earlier runs: {stored_before}" in said
    with sqlite3.connect(out / "grader.sqlite") as db:
        keys = db.execute("SELECT candidate, COUNT(*) FROM gradings WHERE status='graded' GROUP BY candidate").fetchall()
    assert sorted(keys) == [("ann", 1), ("ben", 1), ("cat", 1), ("dee", 1), ("zed", 1)]
    assert _gone_soon(docker_client, container_tag), "containers left behind"


def _batch_with_one_result_stored(subs: Path, out: Path, root: Path, **popen):
    """Start ``grader batch`` (one job at a time) and return once it has stored a result, still running."""
    argv = [sys.executable, "-m", "grader", "batch", str(subs), "--output", str(out), "--jobs", "1",
            "--exercise-root", str(root)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, preexec_fn=sigint_as_a_terminal_gives_it, **popen)
    deadline = time.monotonic() + 120
    while _stored(out) < 1 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert proc.poll() is None and _stored(out) >= 1, "the batch ended or stored nothing before it was stopped"
    return argv, proc, descendants(proc.pid)


def _gone_soon(client, tag: str, seconds: float = 15) -> bool:
    """No grader container of this test's (its tag) within ``seconds`` (removal is asynchronous)."""
    deadline = time.monotonic() + seconds
    while tagged_containers(client, tag):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def _stored(out: Path) -> int:
    try:
        with sqlite3.connect(f"file:{out / 'grader.sqlite'}?mode=ro", uri=True) as db:
            return db.execute("SELECT COUNT(*) FROM gradings").fetchone()[0]
    except sqlite3.Error:
        return 0


@pytest.mark.docker
def test_ctrl_c_stops_the_batch_keeps_what_is_stored_and_leaves_nothing_running(tmp_path, docker_client, container_tag):
    subs, out = with_sleeper(make_submissions(tmp_path / "subs")), tmp_path / "out"
    _, proc, started = _batch_with_one_result_stored(subs, out, patient_root(tmp_path), stderr=subprocess.PIPE,
                                                     text=True)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Run the same command again" in " ".join(err.split())
    # the server sees its pipe close as the batch exits
    assert not still_alive_after(started), "a judge or the judge server outlived the interrupted batch"
    assert _gone_soon(docker_client, container_tag), "containers left behind"
    assert _stored(out) >= 1
