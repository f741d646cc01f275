"""Broken files and the untouched stub are answered by the judge alone (issue 30.4, 30.6, 30.7).

A file that does not parse and the exercise's stub byte for byte run no candidate code, so no sandbox
is opened: every check is "not run", the reason said once at the top, naming the file as the user gave
it. The checks come from the catalog's cache of the exercise's collection (keyed by its fingerprint),
which any grading or `grader list` fills; these tests fill it once per module. How fast this is lives
in ``bench/answer_alone.py``, not in a timed test.
"""

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.exercise import load_exercise
from grader.host.grading import grade
from grader.practice import history
from grader.host.collected import CACHE_FOLDER, cached_checks
from grader.reports.model import LoadError, Status

TOY = Path(__file__).parent / "fixtures" / "toy"
SOLUTION = (TOY / "solution.py").read_text()
BROKEN = "def scale(x, factor)\n    return x * factor\n"


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """The toy's checks collected once for the module (a grading or `grader list` does it for a user)."""
    folder = tmp_path_factory.mktemp("catalog-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADER_DATA_DIR", str(folder))
        cached_checks(load_exercise(TOY))
    return folder / CACHE_FOLDER


@pytest.fixture(autouse=True)
def _cached(collected):
    shutil.copytree(collected, Path(os.environ["GRADER_DATA_DIR"]) / CACHE_FOLDER)


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], env={"COLUMNS": "100", "NO_COLOR": "1"})


def no_sandbox(monkeypatch):
    """Any attempt to start a judge or a sandbox fails the test: the judge answers alone."""
    def refuse(*args, **kwargs):
        raise AssertionError("a judge run was started for a file the judge answers alone")

    monkeypatch.setattr("grader.host.grading.run_checks", refuse)
    monkeypatch.setattr("grader.host.collected.run_checks", refuse)


def test_a_file_that_does_not_parse_is_answered_alone_naming_the_file_as_given(tmp_path, monkeypatch):
    no_sandbox(monkeypatch)
    (tmp_path / "my_try.py").write_text(BROKEN)
    monkeypatch.chdir(tmp_path)
    r = invoke("submit", "toy", "my_try.py", "--exercise-root", TOY.parent, "--json", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    assert 'File "my_try.py", line 1' in r.output and "SyntaxError: expected ':'" in r.output
    assert "toy.py" not in r.output.split("File:")[0] and "/sandbox/" not in r.output  # not the stub's name
    assert "3 checks (6 points) not run: the file does not import" in r.output
    assert "│ Check" not in r.output  # no table of checks that did not run
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["environment"]["sandbox"] == "none" and report["load_error"]["found"] == "source"
    assert [c["not_run"] for c in report["checks"]] == [True, True, True] and report["score"] == 0


def test_the_untouched_stub_is_answered_alone_with_every_check_not_run(monkeypatch):
    no_sandbox(monkeypatch)
    report = grade(TOY, None, sandbox="docker")  # not even Docker is asked: nothing needs it
    assert report.graded and report.untouched_stub and report.load_error == LoadError(
        found="stub", summary="the submission is the exercise's stub, unchanged: nothing written for it was graded")
    assert report.score == 0 and report.max_score == 6 and all(c.not_run for c in report.checks)
    assert {c.status for c in report.checks} == {Status.ERROR} and report.environment.sandbox == "none"


def test_validate_grades_the_stub_for_real(monkeypatch):
    """Proving the checks reject the stub is validate's job: it never takes the shortcut."""
    report = grade(TOY, None, sandbox="local", answer_alone=False)
    assert report.untouched_stub and report.load_error is None  # a real grading: the checks ran and failed
    assert report.environment.sandbox == "local" and not any(c.not_run for c in report.checks)


def test_a_file_that_stops_importing_is_one_line_in_the_change_list_not_a_line_per_check(toy_workspace):
    """Issue 30.4: the change list printed "broke 11", then one line per check."""
    (toy_workspace / "toy.py").write_text(SOLUTION)
    first = invoke("submit", "--exercise-root", TOY.parent, "--sandbox", "local")
    assert first.exit_code == 0, first.output
    (toy_workspace / "toy.py").write_text(BROKEN)
    broken = invoke("submit", "--exercise-root", TOY.parent, "--sandbox", "local")
    assert broken.exit_code == 0, broken.output
    change = broken.output[broken.output.index("Since your last attempt"):]
    assert change.strip() == ("Since your last attempt: the file does not import now: 3 checks that passed last "
                              "time did not run")
    assert "broke" not in broken.output
    (toy_workspace / "toy.py").write_text(SOLUTION)
    fixed = invoke("submit", "--exercise-root", TOY.parent, "--sandbox", "local")
    assert "Since your last attempt: the file imports again: 3 of 3 checks pass" in fixed.output
    assert "fixed:" not in fixed.output
    assert [a.score for a in history.attempts("toy")] == [6.0, 0.0, 6.0]


def test_a_missing_file_inside_a_workspace_is_said_to_be_missing(toy_workspace):
    """Issue 30.7: it said "No exercise at 'nothere.py'" and listed all 27 exercises."""
    r = invoke("submit", "nothere.py", "--exercise-root", TOY.parent)
    assert r.exit_code == 2
    assert f"Submission 'nothere.py' does not exist (in {toy_workspace})." in r.output
    assert "Known exercises" not in r.output and "No exercise" not in r.output
