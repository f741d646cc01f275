"""`grader regrade`: a stored report graded again under its recorded conditions, compared check by check.

Local sandbox and the toy exercise; the report is graded once per module with a
non-default seed, so a regrade that ignored the recorded seed would show.
"""

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.errors import UsageError
from grader.evidence.regrade import read_report, regrade
from grader.grading import grade
from grader.reports.redact import for_audience

TOY = Path(__file__).parent / "fixtures" / "toy"
SEED = 7


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A panel report of the toy's solution, written beside a copy of the file it graded."""
    folder = tmp_path_factory.mktemp("graded")
    sub = folder / "solution.py"
    shutil.copy(TOY / "solution.py", sub)
    report = grade(TOY, sub, sandbox="local", seed=SEED)
    assert report.graded and report.score == 6
    (folder / "report.json").write_text(report.to_json())
    return folder


def test_fresh_report_matches_with_the_recorded_seed(graded):
    report = read_report(graded / "report.json")
    result = regrade(report, graded / "solution.py", exercise_root=TOY.parent)
    assert result.matches and result.differences == []
    assert result.new.environment.hypothesis_seed == SEED and result.new.environment.sandbox == "local"


def test_cli_finds_the_submission_beside_the_report_and_exits_0(graded):
    r = invoke("regrade", graded / "report.json", "--exercises", TOY.parent)
    assert r.exit_code == 0, r.output
    assert "every check's outcome matches" in r.output


def test_an_edited_outcome_is_a_mismatch_naming_the_check(graded, tmp_path):
    data = json.loads((graded / "report.json").read_text())
    check = next(c for c in data["checks"] if c["name"] == "Scales a small tensor")
    check["status"], check["score"] = "failed", 0.0
    (tmp_path / "edited.json").write_text(json.dumps(data))
    r = invoke("regrade", tmp_path / "edited.json", graded / "solution.py", "--exercises", TOY.parent)
    assert r.exit_code == 5, r.output
    mismatches = [line for line in r.output.splitlines() if line.startswith("mismatch:")]
    assert len(mismatches) == 1 and "Scales a small tensor" in mismatches[0]


def test_a_different_submission_is_refused_naming_both_hashes(graded, tmp_path):
    other = tmp_path / "solution.py"
    other.write_text((TOY / "solution.py").read_text() + "# edited\n")
    recorded = json.loads((graded / "report.json").read_text())["environment"]["submission_sha256"]
    r = invoke("regrade", graded / "report.json", other, "--exercises", TOY.parent)
    assert r.exit_code == 2, r.output
    assert recorded in r.output and hashlib.sha256(other.read_bytes()).hexdigest() in r.output


def test_an_exercise_changed_since_is_said_not_crashed(tmp_path):
    root = tmp_path / "exercises"
    shutil.copytree(TOY, root / "toy")
    sub = tmp_path / "solution.py"
    shutil.copy(TOY / "solution.py", sub)
    (tmp_path / "report.json").write_text(grade(root / "toy", sub, sandbox="local").to_json())
    with open(root / "toy" / "checks" / "test_toy.py", "a") as f:
        f.write("\n# an author's edit after the grading\n")
    r = invoke("regrade", tmp_path / "report.json", "--exercises", root)
    assert r.exit_code == 5, r.output
    assert "the exercise changed since this report" in r.output and "Traceback" not in r.output


def test_a_candidate_copy_is_refused(graded, tmp_path):
    candidate = for_audience(read_report(graded / "report.json"), "candidate")
    (tmp_path / "cand.json").write_text(candidate.to_json())
    r = invoke("regrade", tmp_path / "cand.json", graded / "solution.py", "--exercises", TOY.parent)
    assert r.exit_code == 2 and "candidate's copy" in r.output
    with pytest.raises(UsageError, match="candidate"):
        regrade(candidate, graded / "solution.py", exercise_root=TOY.parent)


@pytest.mark.parametrize("text, words", [("not json", "is not a grading report"),
                                         ('{"graded": true}', "[exercise]")])
def test_a_file_that_is_not_a_report_is_usage_exit_2_naming_the_field(tmp_path, text, words):
    (tmp_path / "bad.json").write_text(text)
    r = invoke("regrade", tmp_path / "bad.json", TOY / "solution.py")
    assert r.exit_code == 2 and words in r.output and "Traceback" not in r.output


@pytest.fixture
def runsc_report(graded):
    """The toy's report as a Docker grading under runsc recorded it."""
    report = read_report(graded / "report.json")
    report.environment.sandbox, report.environment.oci_runtime = "docker", "runsc"
    return report


@pytest.fixture
def grade_calls(monkeypatch, runsc_report):
    """grade() stands in (no Docker): it records its keyword arguments and answers the same outcomes."""
    calls = []

    def fake_grade(exercise, submission, **kw):
        calls.append(kw)
        new = runsc_report.model_copy(deep=True)
        new.environment.sandbox, new.environment.oci_runtime = kw["sandbox"], kw["runtime"]
        return new

    monkeypatch.setattr("grader.evidence.regrade.grade", fake_grade)
    monkeypatch.setenv("GRADER_RUNTIME", "runc")  # the machine's default must not win over the record
    return calls


def test_a_runsc_report_regrades_under_runsc(runsc_report, grade_calls, graded):
    result = regrade(runsc_report, graded / "solution.py", exercise_root=TOY.parent)
    assert [(c["sandbox"], c["runtime"]) for c in grade_calls] == [("docker", "runsc")]
    assert result.matches and result.notes == []


def test_a_report_recording_no_runtime_regrades_under_runc(runsc_report, grade_calls, graded, monkeypatch):
    runsc_report.environment.oci_runtime = None  # written before runtimes were recorded
    monkeypatch.setenv("GRADER_RUNTIME", "runsc")
    result = regrade(runsc_report, graded / "solution.py", exercise_root=TOY.parent)
    assert grade_calls[0]["runtime"] == "runc" and result.notes == []


def test_a_runtime_override_is_noted_like_a_sandbox_override(runsc_report, grade_calls, graded):
    result = regrade(runsc_report, graded / "solution.py", exercise_root=TOY.parent, runtime="runc")
    assert grade_calls[-1]["runtime"] == "runc"
    assert result.notes == ["runtime runc instead of the recorded runsc"]
    local = regrade(runsc_report, graded / "solution.py", exercise_root=TOY.parent, sandbox="local", runtime="runc")
    assert grade_calls[-1]["runtime"] is None  # the local sandbox has no OCI runtime
    assert local.notes == ["sandbox local instead of the recorded docker"]


def test_cli_runtime_override_is_said(runsc_report, grade_calls, graded, tmp_path):
    (tmp_path / "report.json").write_text(runsc_report.to_json())
    r = invoke("regrade", tmp_path / "report.json", graded / "solution.py", "--exercises", TOY.parent,
               "--runtime", "runc")
    assert r.exit_code == 0, r.output
    assert "note: runtime runc instead of the recorded runsc" in r.output and grade_calls[-1]["runtime"] == "runc"


def test_a_batch_regrade_passes_the_override_to_each_row(runsc_report, grade_calls, graded, tmp_path):
    from grader.batch.store import Key, Store
    from grader.evidence.regrade_batch import Outcome, regrade_batch

    store = Store(tmp_path)
    key = Key("ann", "toy", runsc_report.environment.submission_sha256, "v")
    store.save_graded(key, str(graded / "solution.py"), runsc_report, 1)
    store.close()
    result = regrade_batch(tmp_path, exercise_root=TOY.parent, runtime="runc")
    assert [r.outcome for r in result.rows] == [Outcome.MATCHES]
    assert result.rows[0].notes == ["runtime runc instead of the recorded runsc"]
    assert grade_calls[-1]["runtime"] == "runc"
