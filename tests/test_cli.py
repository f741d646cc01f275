"""The CLI, in process (click's CliRunner): exit statuses, messages, and reports written."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main

TOY = Path(__file__).parent / "fixtures" / "toy"


def invoke(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def test_submit_graded_exits_0_and_writes_every_report(tmp_path):
    out = tmp_path / "reports"
    r = invoke("submit", TOY, "--exercise-root", TOY.parent, TOY / "solution.py", "--sandbox", "local",
               "--json", out / "r.json", "--html", out / "r.html", "--md", out / "r.md")
    assert r.exit_code == 0, r.output
    assert "Score: 6 / 6" in r.output
    data = json.loads((out / "r.json").read_text())
    assert data["graded"] is True and data["score"] == 6 and len(data["checks"]) == 3
    assert "<html" in (out / "r.html").read_text() and "Toy: scale a tensor" in (out / "r.md").read_text()


def test_submit_of_a_failing_file_still_exits_0(tmp_path):
    r = invoke("submit", TOY, "--exercise-root", TOY.parent, "--sandbox", "local")  # the stub
    assert r.exit_code == 0 and "Score: 0 / 6" in r.output


def test_unknown_exercise_is_usage_exit_2_with_known_names():
    r = invoke("submit", "no-such-exercise")
    assert r.exit_code == 2
    assert "No exercise named 'no-such-exercise'" in r.output and "Known exercises:" in r.output
    assert "Traceback" not in r.output


def test_missing_submission_is_usage_exit_2(tmp_path):
    r = invoke("submit", TOY, "--exercise-root", TOY.parent, tmp_path / "missing.py", "--sandbox", "local")
    assert r.exit_code == 2 and "does not exist" in r.output


def test_report_over_a_python_file_is_refused_before_grading(tmp_path):
    precious = tmp_path / "mine.py"
    precious.write_text("candidate code\n")
    r = invoke("submit", TOY, "--exercise-root", TOY.parent, TOY / "solution.py", "--sandbox", "local", "--json", precious)
    assert r.exit_code == 2 and "mine.py" in r.output
    assert precious.read_text() == "candidate code\n"


def test_no_engine_with_docker_insisted_on_is_infra_exit_3_not_a_score(tmp_path):
    r = invoke("submit", TOY, "--exercise-root", TOY.parent, TOY / "solution.py", "--sandbox", "docker", "--json", tmp_path / "r.json",
               env={"DOCKER_HOST": f"unix://{tmp_path}/none.sock"})
    assert r.exit_code == 3, r.output
    assert "NOT GRADED" in r.output.upper() and "bootstrap.sh" in r.output
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["graded"] is False and data["checks"] == []


def test_no_engine_by_default_falls_back_to_local_and_says_so_once(tmp_path):
    r = invoke("submit", TOY, "--exercise-root", TOY.parent, TOY / "solution.py", "--json", tmp_path / "r.json",
               env={"DOCKER_HOST": f"unix://{tmp_path}/none.sock"})
    assert r.exit_code == 0, r.output
    note = [line for line in r.output.splitlines() if line.startswith("note: ")]
    assert len(note) == 1 and "No Docker engine answered" in note[0]
    assert "NOT isolated" in r.output and "sandbox local" in r.output
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["graded"] is True and data["environment"]["sandbox"] == "local"
    fallback = [w["message"] for w in data["warnings"] if w["code"] == "sandbox_fallback"]
    assert len(fallback) == 1 and "No Docker engine answered" in fallback[0]


@pytest.mark.parametrize("command", [["submit", TOY, "--exercise-root", TOY.parent, TOY / "solution.py"],
                                     ["validate", "toy", "--exercise-root", TOY.parent],
                                     ["batch", TOY.parent, "--exercise-root", TOY.parent]])
@pytest.mark.parametrize("bad", ["two", "0", "device=", "all,1"])
def test_a_bad_gpus_value_is_refused_where_it_is_read_naming_the_option_the_value_and_the_spellings(command, bad):
    """Issue 28: --gpus is read once, by the option (a GpuRequest from then on): a bad value is a usage error
    (exit 2) before anything is looked at, in every command that grades."""
    r = invoke(*command, "--gpus", bad, "--sandbox", "local")
    assert r.exit_code == 2, r.output
    said = " ".join(r.output.split())
    assert f"Invalid value for '--gpus': {bad!r}: expected 'all', a count like '1', or 'device=0,1'" in said
    assert "Traceback" not in r.output


def test_gpus_on_a_cpu_exercise_is_ignored_with_a_warning():
    # The toy's gpu policy is "none": --gpus is never sent to Docker, and the scorecard says so.
    r = invoke("submit", TOY, "--exercise-root", TOY.parent, TOY / "solution.py", "--gpus", "all", "--sandbox", "local")
    assert r.exit_code == 0 and "--gpus all ignored" in r.output
