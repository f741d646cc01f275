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
from grader.host.grading import grade
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
    result = regrade(report, graded / "solution.py", exercise_root=TOY.parent, sandbox="local")
    assert result.matches and result.differences == []
    assert result.new.environment.hypothesis_seed == SEED and result.new.environment.sandbox == "local"


def test_cli_finds_the_submission_beside_the_report_and_exits_0(graded):
    r = invoke("regrade", graded / "report.json", "--exercises", TOY.parent, "--sandbox", "local")
    assert r.exit_code == 0, r.output
    assert "every check's outcome matches" in r.output
    assert "note: sandbox local (as recorded), as asked: candidate code ran as you, not isolated" in r.output


def test_an_edited_outcome_is_a_mismatch_naming_the_check(graded, tmp_path):
    """A careful edit (the check and the score together, so the report agrees with itself): regrade names both."""
    data = json.loads((graded / "report.json").read_text())
    check = next(c for c in data["checks"] if c["name"] == "Scales a small tensor")
    check["status"], check["score"] = "failed", 0.0
    data["score"] -= check["max_score"]
    (tmp_path / "edited.json").write_text(json.dumps(data))
    r = invoke("regrade", tmp_path / "edited.json", graded / "solution.py", "--exercises", TOY.parent,
               "--sandbox", "local")
    assert r.exit_code == 5, r.output
    mismatches = [line for line in r.output.splitlines() if line.startswith("mismatch:")]
    assert mismatches[0] == f"mismatch: score: {data['score']:g} vs 6"
    assert len(mismatches) == 2 and "Scales a small tensor" in mismatches[1]


def test_a_report_whose_score_disagrees_with_its_checks_is_refused_naming_both_values(graded, grade_calls, tmp_path):
    """The attack: the headline edited (score and flags), the checks left as graded. Refused when read, before
    anything is graded, naming the field and both values; never "matches"."""
    data = json.loads((graded / "report.json").read_text())
    data["score"] = 22
    (tmp_path / "report.json").write_text(json.dumps(data))
    with pytest.raises(UsageError, match="score is 22 but its checks add up to 6"):
        read_report(tmp_path / "report.json")
    r = invoke("regrade", tmp_path / "report.json", graded / "solution.py", "--exercises", TOY.parent)
    assert r.exit_code == 5, r.output
    assert "was edited after grading, so it is refused: score is 22 but its checks add up to 6" in r.output
    assert "matches" not in r.output and grade_calls == []  # nothing was graded


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
    r = invoke("regrade", tmp_path / "report.json", "--exercises", root, "--sandbox", "local")
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
    assert local.notes == ["sandbox local (instead of the recorded docker), as asked: candidate code ran as you, "
                           "not isolated"]


def test_cli_runtime_override_is_said(runsc_report, grade_calls, graded, tmp_path):
    (tmp_path / "report.json").write_text(runsc_report.to_json())
    r = invoke("regrade", tmp_path / "report.json", graded / "solution.py", "--exercises", TOY.parent,
               "--runtime", "runc")
    assert r.exit_code == 0, r.output
    assert "note: runtime runc instead of the recorded runsc" in r.output and grade_calls[-1]["runtime"] == "runc"


def test_a_batch_regrade_passes_the_override_to_each_row(runsc_report, grade_calls, graded, tmp_path):
    from grader.batch.store import Key, Store
    from grader.batch.regrade import Outcome, regrade_batch

    store = Store(tmp_path)
    key = Key("ann", "toy", runsc_report.environment.submission_sha256, "v")
    store.save_graded(key, str(graded / "solution.py"), runsc_report, 1)
    store.close()
    result = regrade_batch(tmp_path, exercise_root=TOY.parent, runtime="runc")
    assert [r.outcome for r in result.rows] == [Outcome.MATCHES]
    assert result.rows[0].notes == ["runtime runc instead of the recorded runsc"]
    assert grade_calls[-1]["runtime"] == "runc"


# ---------------------------------------------------------------- a report is data, never a path or a choice of isolation

ESC = "\x1b[2J\x1b]0;owned\x07\u202e"  # clear the screen, retitle the terminal, reverse the line


@pytest.fixture
def shipped_exercise(tmp_path):
    """A toy exercise folder as an attacker ships it in a bundle: its checks' conftest.py leaves a marker."""
    folder = tmp_path / "bundle" / "ex"
    shutil.copytree(TOY, folder)
    marker = tmp_path / "conftest-ran"
    (folder / "checks" / "conftest.py").write_text(f"open({str(marker)!r}, 'w').write('ran in the judge')\n")
    return folder, marker


@pytest.mark.parametrize("as_written", ["absolute", "proc", "relative"])
def test_a_report_naming_its_exercise_by_path_is_refused_and_nothing_of_it_runs(graded, shipped_exercise, tmp_path,
                                                                                monkeypatch, as_written):
    folder, marker = shipped_exercise
    monkeypatch.chdir(tmp_path)
    data = json.loads((graded / "report.json").read_text())
    data["exercise"] = {"absolute": str(folder), "proc": "/proc/self/cwd/bundle/ex", "relative": "../bundle/ex"}[as_written]
    (tmp_path / "report.json").write_text(json.dumps(data))
    r = invoke("regrade", tmp_path / "report.json", graded / "solution.py", "--sandbox", "local",
               *(["--exercises", tmp_path / "bundle"] if as_written == "relative" else []))
    assert r.exit_code == 2, r.output
    assert "which is not an exercise name" in r.output and "Traceback" not in r.output
    assert not marker.exists(), "the shipped folder's conftest.py ran in the judge"


def test_a_report_naming_a_catalog_exercise_loads_it_from_the_catalog_only(graded, tmp_path):
    data = json.loads((graded / "report.json").read_text())
    data["exercise"] = "nosuch"
    (tmp_path / "report.json").write_text(json.dumps(data))
    r = invoke("regrade", tmp_path / "report.json", graded / "solution.py", "--exercises", TOY.parent)
    assert r.exit_code == 2 and "No exercise named 'nosuch'" in r.output, r.output


def test_a_report_recording_the_local_sandbox_is_regraded_in_docker_unless_asked(graded, grade_calls):
    report = read_report(graded / "report.json")
    assert report.environment.sandbox == "local"
    result = regrade(report, graded / "solution.py", exercise_root=TOY.parent)
    assert grade_calls[-1]["sandbox"] == "docker"
    assert "sandbox docker instead of the recorded local: a recorded local sandbox is used only when asked for " \
           "(--sandbox local)" in result.notes
    asked = regrade(report, graded / "solution.py", exercise_root=TOY.parent, sandbox="local")
    assert grade_calls[-1]["sandbox"] == "local"
    assert asked.notes[0] == "sandbox local (as recorded), as asked: candidate code ran as you, not isolated"


def test_the_untouched_stub_answered_by_the_judge_alone_regrades_with_no_sandbox_note(tmp_path):
    """The stub (like a file that does not parse) is answered without a sandbox, recorded as ``none``; its regrade
    is answered the same way, so "sandbox docker instead of the recorded none" would be untrue."""
    stub = tmp_path / "toy.py"
    shutil.copy(TOY / "toy.py", stub)
    report = grade(TOY, stub, sandbox="local", seed=SEED)
    assert report.untouched_stub and report.environment.sandbox == "none"
    result = regrade(report, stub, exercise_root=TOY.parent)
    assert result.matches and result.new.environment.sandbox == "none"
    assert result.notes == []


def test_cli_regrades_a_local_report_in_docker_by_default_and_says_so(graded, grade_calls):
    r = invoke("regrade", graded / "report.json", "--exercises", TOY.parent)
    assert r.exit_code == 0, r.output
    assert grade_calls[-1]["sandbox"] == "docker" and "note: sandbox docker instead of the recorded local" in r.output


def test_regrade_output_shows_escapes_never_the_raw_characters(graded, grade_calls, tmp_path):
    data = json.loads((graded / "report.json").read_text())
    check = next(c for c in data["checks"] if c["name"] == "Scales a small tensor")
    check["name"], check["status"], check["score"] = "Scales" + ESC, "failed", 0.0
    data["score"] -= check["max_score"]
    data["environment"]["torch_version"] = "2.0" + ESC
    (tmp_path / "report.json").write_text(json.dumps(data))
    r = invoke("regrade", tmp_path / "report.json", graded / "solution.py", "--exercises", TOY.parent)
    assert r.exit_code == 5, r.output
    assert "mismatch: Scales\\x1b[2J\\x1b]0;owned\\x07\\u202e [" in r.output
    assert "note: torch_version: recorded 2.0\\x1b[2J" in r.output
    assert "\x1b" not in r.output and "\u202e" not in r.output and "\x07" not in r.output


def test_an_error_quoting_a_report_field_shows_escapes(graded, tmp_path):
    data = json.loads((graded / "report.json").read_text())
    data["exercise"] = "ex" + ESC
    (tmp_path / "report.json").write_text(json.dumps(data))
    r = invoke("regrade", tmp_path / "report.json", graded / "solution.py", "--exercises", TOY.parent)
    assert r.exit_code == 2 and "not an exercise name" in r.output, r.output
    assert "\\x1b[2J" in r.output and "\x1b" not in r.output and "\u202e" not in r.output


def test_a_batch_row_naming_a_path_or_control_characters_is_refused_and_shown_escaped(graded, grade_calls, tmp_path):
    from grader.batch.store import Key, Store

    report = read_report(graded / "report.json")
    report.exercise = "/proc/self/cwd/bundle/ex"
    store = Store(tmp_path)
    store.save_graded(Key("ann" + ESC, "toy", report.environment.submission_sha256, "v"),
                      str(graded / "solution.py"), report, 1)
    store.close()
    r = invoke("regrade", tmp_path, tmp_path, "--exercises", TOY.parent)
    assert r.exit_code == 5, r.output
    assert "ann\\x1b[2J\\x1b]0;owned\\x07\\u202e toy: refused: The report names the exercise " \
           "'/proc/self/cwd/bundle/ex'" in r.output
    assert "\x1b" not in r.output and "\u202e" not in r.output and grade_calls == []


@pytest.mark.parametrize("image", ["alpine:latest", "grader-runtime:latest", "evil/grader-runtime:0123456789ab",
                                   "grader-runtime:0123456789ab@sha256:00"])
def test_a_recorded_image_that_is_not_a_grader_runtime_image_is_not_used(runsc_report, grade_calls, graded, image):
    """A report is editable data: it cannot choose which image on the host runs the submission."""
    runsc_report.environment.image = image
    result = regrade(runsc_report, graded / "solution.py", exercise_root=TOY.parent)
    assert grade_calls[-1]["image"] is None
    assert any(f"names the image {image!r}, which is not a grader runtime image" in n for n in result.notes)


def test_a_recorded_grader_runtime_image_is_used(runsc_report, grade_calls, graded):
    runsc_report.environment.image = "grader-runtime:0123456789ab"
    result = regrade(runsc_report, graded / "solution.py", exercise_root=TOY.parent)
    assert grade_calls[-1]["image"] == "grader-runtime:0123456789ab"
    assert not any("image" in n for n in result.notes)
