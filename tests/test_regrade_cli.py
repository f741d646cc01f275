"""``grader regrade`` from a newcomer's side (issue 30.9): without the file, it says where the report records it."""

from pathlib import Path

from click.testing import CliRunner

from grader.cli import main
from grader.reports.model import CheckResult, Environment, Report, Status, Visibility


def write_report(folder: Path, submission_path: str) -> Path:
    check = CheckResult(id="t.py::test_a", name="a", status=Status.PASSED, score=1, max_score=1,
                        visibility=Visibility.VISIBLE)  # a report the grader could have written: graded, one check
    report = Report(exercise="attention", graded=True, checks=[check], score=1, max_score=1, environment=Environment(
        submission_name="attention.py", submission_path=submission_path, submission_sha256="0" * 64))
    path = folder / "r.json"
    path.write_text(report.to_json())
    return path


def test_without_the_file_regrade_points_to_the_recorded_source_path(tmp_path):
    report = write_report(tmp_path, "/home/ann/work/attention.py")
    r = CliRunner().invoke(main, ["regrade", str(report)], env={"COLUMNS": "300"})
    assert r.exit_code == 2, r.output
    assert "No submission named 'attention.py' beside" in r.output
    assert "The report records it was graded from /home/ann/work/attention.py" in r.output
    assert f"grader regrade {report} /home/ann/work/attention.py" in r.output


def test_the_recorded_path_is_quoted_escaped_and_never_opened(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("x = 1\n")
    (tmp_path / "elsewhere").mkdir()
    report = write_report(tmp_path / "elsewhere", f"{planted}\x1b[2J\u202e")
    r = CliRunner().invoke(main, ["regrade", str(report)], env={"COLUMNS": "300"})
    assert r.exit_code == 2 and "\x1b[2J" not in r.output and "\u202e" not in r.output
    assert "not opened by regrade" in r.output  # the report's path is data: quoted, not graded
