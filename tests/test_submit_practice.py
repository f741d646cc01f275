"""`grader submit` on a candidate's laptop: workspaces, history, the clock and the audience rules.

Graded with the local sandbox and the toy exercise, in process through click's
CliRunner, so each test costs one or two short gradings.
"""

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.practice import clock, history

TOY = Path(__file__).parent / "fixtures" / "toy"
SOLUTION = (TOY / "solution.py").read_text()
# Right on the visible checks' small example, wrong on the hidden property (any factor but 3).
HALF_RIGHT = "import math\n\ndef scale(x, factor):\n    if not math.isfinite(factor):\n" \
             "        raise ValueError('factor must be finite')\n    return x * 3.0\n"
COLUMNS = {"COLUMNS": "80", "NO_COLOR": "1"}


def invoke(*args):
    """The CLI; ``grader submit`` grades against the fixtures' catalog, where the toy is."""
    if args[:1] == ("submit",):
        args = (*args, "--exercise-root", TOY.parent)
    return CliRunner().invoke(main, [str(a) for a in args], env=COLUMNS)


@pytest.fixture
def workspace(toy_workspace):
    return toy_workspace


def test_submit_inside_a_workspace_knows_the_exercise_and_the_file(workspace):
    (workspace / "toy.py").write_text(SOLUTION)
    r = invoke("submit", "--sandbox", "local")
    assert r.exit_code == 0, r.output
    assert "Score: 6 / 6" in r.output
    assert [a.score for a in history.attempts("toy")] == [6.0]


def test_submit_of_a_file_finds_its_workspace_from_anywhere(workspace, tmp_path, monkeypatch):
    (workspace / "toy.py").write_text(SOLUTION)
    monkeypatch.chdir(tmp_path)
    r = invoke("submit", workspace / "toy.py", "--sandbox", "local")
    assert r.exit_code == 0 and "Score: 6 / 6" in r.output, r.output


def test_outside_a_workspace_submit_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = invoke("submit")
    assert r.exit_code == 2 and "not inside a workspace" in r.output and "grader init NAME" in r.output
    stray = tmp_path / "stray.py"
    stray.write_text(SOLUTION)
    r = invoke("submit", stray)
    assert r.exit_code == 2 and "which exercise it answers is unknown" in r.output
    assert "Traceback" not in r.output


def test_a_second_attempt_says_which_checks_flipped_and_history_lists_both(workspace):
    (workspace / "toy.py").write_text(SOLUTION)
    assert invoke("submit", "--sandbox", "local").exit_code == 0
    (workspace / "toy.py").write_text(HALF_RIGHT)
    r = invoke("submit", "--sandbox", "local")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()  # the counts, then one line per flipped check
    at = lines.index("Since your last attempt: broke 1")
    assert lines[at + 1] == "  broke: Scales any vector by any factor"
    h = invoke("history", "toy")
    assert h.exit_code == 0, h.output
    assert "Scales any vector by any factor" in h.output and "6/6" in h.output
    assert all(len(line) <= 80 for line in h.output.splitlines())
    assert [a.score for a in history.attempts("toy")] == [6.0, 3.0]


def test_no_history_flag_keeps_nothing(workspace):
    (workspace / "toy.py").write_text(SOLUTION)
    assert invoke("submit", "--sandbox", "local", "--no-history").exit_code == 0
    assert history.attempts("toy") == []


def test_a_timed_submission_shows_elapsed_time_and_a_late_one_is_marked(workspace, tmp_path):
    (workspace / "toy.py").write_text(SOLUTION)
    started = invoke("start", "toy", "--exercise-root", TOY.parent, "--minutes", "45")
    assert started.exit_code == 0, started.output
    r = invoke("submit", "--sandbox", "local", "--json", tmp_path / "on_time.json")
    assert "of 45 min" in r.output and "LATE" not in r.output
    assert json.loads((tmp_path / "on_time.json").read_text())["timing"]["over_limit"] is False

    an_hour_ago = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)
    clock.start("toy", 45, restart=True, now=an_hour_ago)
    r = invoke("submit", "--sandbox", "local", "--json", tmp_path / "late.json")
    assert "LATE" in r.output, r.output
    timing = json.loads((tmp_path / "late.json").read_text())["timing"]
    assert timing["over_limit"] is True and timing["elapsed_s"] >= 3600
    assert history.attempts("toy")[-1].over_limit is True


def test_candidate_sees_hidden_checks_by_name_points_and_status_only(workspace, tmp_path):
    (workspace / "toy.py").write_text(HALF_RIGHT)
    r = invoke("submit", "--sandbox", "local", "--json", tmp_path / "cand.json")
    assert r.exit_code == 0, r.output
    hidden_name = "Scales any vector by any factor"
    row = next(line for line in r.output.splitlines() if "Scales any vector" in line)  # the name wraps
    assert "failed" in row and "0/3" in row and "details withheld" in row
    flat = " ".join(r.output.replace("│", " ").split())
    assert "1 hidden check (3 points): 0 passed, 1 not passed" in flat
    data = json.loads((tmp_path / "cand.json").read_text())
    assert data["audience"] == "candidate"
    hidden = next(c for c in data["checks"] if c["name"] == hidden_name)
    assert hidden["status"] == "failed" and hidden["max_score"] == 3
    assert (hidden["message"], hidden["counterexample"], hidden["details"]) == ("", None, "")
    assert "test_scale_property" not in hidden["id"]
    assert "n=" not in r.output and "factor=" not in r.output  # the hidden counterexample's inputs

    panel = invoke("submit", "--sandbox", "local", "--audience", "panel", "--json", tmp_path / "panel.json")
    full = next(c for c in json.loads((tmp_path / "panel.json").read_text())["checks"] if c["name"] == hidden_name)
    assert full["counterexample"] and "factor=" in full["counterexample"] and "factor=" in panel.output
