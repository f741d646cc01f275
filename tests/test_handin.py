"""``grader hand-in`` (issue 30.1): one command in a workspace packs the answer exactly as ``grader batch`` reads it."""

import hashlib
import json
import tomllib
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.exercise import load_exercise
from grader.practice.pack import pack_exercise

TOY = Path(__file__).parent / "fixtures" / "toy"
SOLUTION = (TOY / "solution.py").read_text()
ENV = {"COLUMNS": "200", "NO_COLOR": "1"}


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], env=ENV)


@pytest.fixture
def packed_workspace(tmp_path, monkeypatch) -> Path:
    """The toy as a panel hands it to "ann" (`grader pack --candidate ann`), unzipped, the candidate inside."""
    pack_exercise(load_exercise(TOY), tmp_path / "toy.zip", candidate="ann")
    with zipfile.ZipFile(tmp_path / "toy.zip") as zf:
        zf.extractall(tmp_path / "home")
    ws = tmp_path / "home" / "toy"
    monkeypatch.chdir(ws)
    return ws


def test_hand_in_with_no_argument_packs_the_answer_in_the_batch_layout(packed_workspace):
    (packed_workspace / "toy.py").write_text(SOLUTION)
    (packed_workspace / "notes.txt").write_text("my private notes")  # never handed in
    r = invoke("hand-in")
    assert r.exit_code == 0, r.output
    out = packed_workspace / "ann-toy.zip"
    assert f"wrote {out}, for candidate ann (grader.toml, as the panel packed it):" in r.output
    with zipfile.ZipFile(out) as zf:
        assert zf.namelist() == ["ann/", "ann/toy/", "ann/toy/HANDIN.toml", "ann/toy/toy.py"]
        assert zf.read("ann/toy/toy.py").decode() == SOLUTION
        summary = tomllib.loads(zf.read("ann/toy/HANDIN.toml").decode())
    digest = hashlib.sha256(SOLUTION.encode()).hexdigest()
    assert summary["hand_in"] == {"candidate": "ann", "exercise": "toy", "file": "toy.py", "sha256": digest,
                                  "exercise_fingerprint": load_exercise(TOY).fingerprint}
    assert "last_grading" not in summary and "Not graded on this machine yet" in r.output
    assert f"toy.py sha256 {digest}" in r.output


def test_the_zip_is_reproducible_and_never_overwritten_without_force(packed_workspace):
    (packed_workspace / "toy.py").write_text(SOLUTION)
    assert invoke("hand-in").exit_code == 0
    first = (packed_workspace / "ann-toy.zip").read_bytes()
    again = invoke("hand-in")
    assert again.exit_code == 2 and "already exists" in again.output and "--force" in again.output
    assert invoke("hand-in", "--force").exit_code == 0
    assert (packed_workspace / "ann-toy.zip").read_bytes() == first


def test_the_summary_carries_the_last_grading_and_whether_it_graded_this_file(packed_workspace):
    (packed_workspace / "toy.py").write_text(SOLUTION)
    graded = invoke("submit", "--exercise-root", TOY.parent, "--sandbox", "local")
    assert graded.exit_code == 0, graded.output
    r = invoke("hand-in", "--candidate", "ann.b", "-o", packed_workspace.parent / "out.zip")
    assert r.exit_code == 0, r.output
    assert "Last grading: 6/6 at " in r.output and "of this file." in r.output
    with zipfile.ZipFile(packed_workspace.parent / "out.zip") as zf:
        last = tomllib.loads(zf.read("ann.b/toy/HANDIN.toml").decode())["last_grading"]
    assert last["score"] == 6 and last["max_score"] == 6 and last["same_file"] is True


@pytest.mark.parametrize("name", ["../escape", "a/b", "bad\x1b[2Jname", ""])
def test_a_candidate_name_a_batch_could_not_use_is_refused(packed_workspace, name):
    r = invoke("hand-in", "--candidate", name)
    assert r.exit_code == 2 and "The candidate name" in r.output and "Traceback" not in r.output
    assert not list(packed_workspace.glob("*.zip"))


def test_a_marker_naming_a_path_as_its_exercise_never_reaches_the_zip(packed_workspace):
    """The marker is the candidate's file: an exercise of "../../etc" would put entries outside the panel's
    folder when a careless tool extracts the zip."""
    marker = packed_workspace / "grader.toml"
    marker.write_text(marker.read_text().replace('exercise = "toy"', 'exercise = "../../etc"'))
    r = invoke("hand-in")
    assert r.exit_code == 2 and "not an exercise name" in r.output
    assert not list(packed_workspace.glob("*.zip"))


def test_outside_a_workspace_hand_in_says_where_to_run_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = invoke("hand-in")
    assert r.exit_code == 2 and "not inside a workspace" in r.output


def test_grader_batch_grades_what_hand_in_produced_with_no_layout_problem(packed_workspace, tmp_path):
    """How a panel collects: unzip every hand-in into one folder, then `grader batch` it."""
    (packed_workspace / "toy.py").write_text(SOLUTION)
    assert invoke("hand-in").exit_code == 0
    submissions = tmp_path / "submissions"
    with zipfile.ZipFile(packed_workspace / "ann-toy.zip") as zf:
        zf.extractall(submissions)
    r = invoke("batch", submissions, "--output", tmp_path / "results", "--sandbox", "local", "--jobs", "1",
               "--exercise-root", TOY.parent, "--only", "toy")
    assert r.exit_code == 0, r.output
    assert "layout:" not in r.output
    [row] = [json.loads(line) for line in (tmp_path / "results" / "results.jsonl").read_text().splitlines()]
    assert (row["candidate"], row["exercise"], row["status"], row["score"], row["max_score"]) == (
        "ann", "toy", "graded", 6, 6)
