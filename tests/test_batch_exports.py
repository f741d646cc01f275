"""summary.csv, results.jsonl and the Gradescope files agree with the rows; not graded is never 0."""

from __future__ import annotations

import csv
import json
import re

from grader.batch import exports
from grader.batch.model import Row, RowStatus, flags_for
from grader.reports.model import CheckResult, Diagnosis, Environment, Report, Status, Visibility
from grader.reports.derived import report_from_json


def report(score_a: float, status_b: Status = Status.FAILED) -> Report:
    checks = [
        CheckResult(id="test_a.py::test_one", name="one", status=Status.PASSED if score_a else Status.FAILED,
                    score=score_a, max_score=2, visibility=Visibility.VISIBLE, message="" if score_a else "wrong"),
        CheckResult(id="test_a.py::test_two", name="two", status=status_b, score=0, max_score=3,
                    visibility=Visibility.HIDDEN, message="hidden detail"),
    ]
    return Report(exercise="toy", graded=True, checks=checks, score=score_a, max_score=5,
                  environment=Environment(sandbox="docker", oci_runtime="runc"))


def rows() -> list[Row]:
    return [
        Row("ann", "toy", RowStatus.GRADED, 2, 5, report=report(2)),
        Row("=HYPERLINK(\"x\")", "toy", RowStatus.GRADED, 0, 5, report=report(0, Status.TIMEOUT)),
        Row("cid", "toy", RowStatus.NOT_GRADED, reason="not graded after 3 attempts (engine down); rerun the batch"),
        Row("dee", "toy", RowStatus.MISSING, reason="no folder dee/toy/"),
    ]


def test_summary_csv_columns_and_values(tmp_path):
    exports.write_summary_csv(rows(), tmp_path / "summary.csv")
    with open(tmp_path / "summary.csv", newline="") as f:
        table = list(csv.reader(f))
    assert table[0] == ["candidate", "exercise", "score", "max_score", "status", "sandbox",
                        "toy::test_a.py::test_one", "toy::test_a.py::test_two", "flags", "diagnosis", "reason",
                        "published", "sha256", "handin", "handin_sha256", "handins"]
    assert table[1] == ["ann", "toy", "2", "5", "graded", "docker", "2", "0", "", "", "", "", "", "", "", ""]
    assert table[2][0] == "'=HYPERLINK(\"x\")"  # a formula is defused, not run by a spreadsheet
    assert table[3][:6] == ["cid", "toy", "", "", "not_graded", ""] and "rerun" in table[3][-6]
    assert table[4][:6] == ["dee", "toy", "", "", "missing", ""]


def local(row: Row) -> Row:
    env = row.report.environment.model_copy(update={"sandbox": "local", "oci_runtime": None})
    row.report = row.report.model_copy(update={"environment": env})
    row.flags = flags_for(row.report)
    return row


def test_every_row_says_which_sandbox_graded_it_in_both_exports(tmp_path):
    """A row graded in the local sandbox says so in summary.csv and results.jsonl (and is flagged not isolated),
    so no export can pass an unisolated result off as a Docker one."""
    mixed = [local(Row("ann", "toy", RowStatus.GRADED, 2, 5, report=report(2))),
             Row("ben", "toy", RowStatus.GRADED, 2, 5, report=report(2)),
             Row("cid", "toy", RowStatus.GRADED, 2, 5, report=report(2).model_copy(update={
                 "environment": Environment(sandbox="docker", oci_runtime="runsc")})),
             Row("dee", "toy", RowStatus.MISSING)]
    exports.write_summary_csv(mixed, tmp_path / "summary.csv")
    with open(tmp_path / "summary.csv", newline="") as f:
        header, *table = list(csv.reader(f))
    cells = [dict(zip(header, r)) for r in table]
    assert [(c["candidate"], c["sandbox"]) for c in cells] == [
        ("ann", "local"), ("ben", "docker"), ("cid", "docker (runsc)"), ("dee", "")]
    assert cells[0]["flags"] == "not_isolated" and cells[1]["flags"] == ""
    exports.write_results_jsonl(mixed, tmp_path / "r.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [(x["candidate"], x["sandbox"], x["isolated"]) for x in lines] == [
        ("ann", "local", False), ("ben", "docker", True), ("cid", "docker (runsc)", True), ("dee", None, None)]


def test_a_check_error_row_has_no_score_no_points_and_no_gradescope_file(tmp_path):
    broken = report(2)
    broken.checks[1] = broken.checks[1].model_copy(update={"status": Status.CHECK_ERROR,
                                                           "message": "the check's own code raised KeyError: 'x'"})
    broken = broken.model_copy(update={"graded": False, "score": 0, "max_score": 0,
                                       "not_graded_reason": "a check of this exercise raised an error of its own"})
    row = Row("eve", "toy", RowStatus.CHECK_ERROR, report=broken, flags=flags_for(broken),
              reason="check error in two: a bug in the exercise's checks")
    exports.write_summary_csv([row], tmp_path / "summary.csv")
    with open(tmp_path / "summary.csv", newline="") as f:
        header, line = list(csv.reader(f))
    cell = dict(zip(header, line))
    assert (cell["score"], cell["max_score"], cell["status"], cell["flags"]) == ("", "", "check_error", "check_error")
    assert cell["toy::test_a.py::test_one"] == cell["toy::test_a.py::test_two"] == ""
    exports.write_scorecards([row], tmp_path)
    assert (tmp_path / "candidates" / "eve" / "toy.html").is_file()  # the panel reads which check broke
    assert not (tmp_path / "candidates" / "eve" / "toy" / "results.json").exists()  # nothing to import as a 0


def test_summary_csv_names_each_rows_flags(tmp_path):
    flagged = Row("eve", "toy", RowStatus.GRADED, 0, 5, report=report(0), flags=["tampering", "dynamic_access"])
    exports.write_summary_csv([flagged], tmp_path / "summary.csv")
    with open(tmp_path / "summary.csv", newline="") as f:
        header, row = list(csv.reader(f))
    assert dict(zip(header, row))["flags"] == "tampering dynamic_access"


LOOKS_LIKE = Diagnosis(mutant="swapped", description="=adds instead of multiplying", matched=1, failed=1,
                       signature=1, candidate_visible=False)


def test_summary_csv_and_results_jsonl_carry_the_diagnosis(tmp_path):
    """The panel's exports name the mistake a row looks like, in the CSV (one cell) and in the JSON lines."""
    diagnosed = Row("eve", "toy", RowStatus.GRADED, 2, 5,
                    report=report(2).model_copy(update={"diagnosis": [LOOKS_LIKE]}))
    exports.write_summary_csv([diagnosed], tmp_path / "summary.csv")
    with open(tmp_path / "summary.csv", newline="") as f:
        header, row = list(csv.reader(f))
    assert dict(zip(header, row))["diagnosis"] == "swapped (1/1): =adds instead of multiplying"
    exports.write_results_jsonl([diagnosed, *rows()], tmp_path / "r.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert lines[0]["diagnosis"] == [LOOKS_LIKE.model_dump()] and lines[1]["diagnosis"] == []


def test_results_jsonl_has_one_line_per_row(tmp_path):
    exports.write_results_jsonl(rows(), tmp_path / "r.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [(x["candidate"], x["status"], x["score"]) for x in lines] == [
        ("ann", "graded", 2), ('=HYPERLINK("x")', "graded", 0), ("cid", "not_graded", None), ("dee", "missing", None)]
    assert lines[0]["scorecard"] == "candidates/ann/toy.html"


def test_gradescope_results_format():
    data = exports.gradescope(report(2))
    assert data["score"] == 2
    assert [(t["name"], t["score"], t["max_score"], t["status"], t["visibility"]) for t in data["tests"]] == [
        ("one", 2, 2, "passed", "visible"), ("two", 0, 3, "failed", "hidden")]
    assert data["tests"][1]["output"] == "hidden detail"  # hidden from students by visibility, kept for staff


def test_scorecards_only_for_rows_with_a_report(tmp_path):
    exports.write_scorecards(rows(), tmp_path)
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written == [f"candidates/{name}" for name in (
        '=HYPERLINK("x")/toy.html', '=HYPERLINK("x")/toy.json', '=HYPERLINK("x")/toy/results.json',
        "ann/toy.html", "ann/toy.json", "ann/toy/results.json")]
    assert "hidden detail" in (tmp_path / "candidates" / "ann" / "toy.html").read_text()  # the panel sees hidden checks


def test_a_batch_scorecard_names_its_candidate_in_title_heading_and_json(tmp_path):
    """Tabs and printouts of two candidates' scorecards can be told apart."""
    from rich.console import Console

    from grader.reports.render import render_markdown
    from grader.reports.terminal import render_terminal

    exports.write_scorecards(rows(), tmp_path)
    page = (tmp_path / "candidates" / "ann" / "toy.html").read_text()
    assert re.search(r"<title>ann · ", page) and "Candidate <b>ann</b>" in page
    stored = report_from_json((tmp_path / "candidates" / "ann" / "toy.json").read_text())
    assert stored.candidate == "ann"
    assert "Candidate ann · Exercise" in render_markdown(stored)
    console = Console(width=80, no_color=True, record=True)
    render_terminal(stored, console)
    assert "Candidate: ann" in console.export_text()
    assert "Candidate" not in render_markdown(report(2))  # `grader submit` knows no candidate: nothing shown


def test_a_collected_files_provenance_is_in_summary_csv_and_results_jsonl(tmp_path):
    """Issue 36: the panel sees where a graded file came from: its sha256, and whether its hand-in record agrees."""
    from grader.batch.provenance import Provenance

    checked = Row("ann", "toy", RowStatus.GRADED, 2, 5, report=report(2), sha256="a" * 64,
                  provenance=Provenance("a" * 64, True, 2))
    differs = Row("bob", "toy", RowStatus.GRADED, 2, 5, report=report(2), sha256="b" * 64,
                  provenance=Provenance("c" * 64, False, 1, "its HANDIN.toml says sha256 'ccc'"))
    plain = Row("cid", "toy", RowStatus.GRADED, 2, 5, report=report(2), sha256="d" * 64)
    exports.write_summary_csv([checked, differs, plain], tmp_path / "summary.csv")
    with open(tmp_path / "summary.csv", newline="") as f:
        table = {r["candidate"]: r for r in csv.DictReader(f)}
    assert [table["ann"][k] for k in ("sha256", "handin", "handin_sha256", "handins")] == ["a" * 64, "checked",
                                                                                           "a" * 64, "2"]
    assert table["bob"]["handin"] == "differs" and table["bob"]["handin_sha256"] == "c" * 64
    assert table["cid"]["handin"] == "none" and table["cid"]["sha256"] == "d" * 64
    exports.write_results_jsonl([differs], tmp_path / "results.jsonl")
    line = json.loads((tmp_path / "results.jsonl").read_text())
    assert line["handin"] == {"state": "differs", "sha256": "c" * 64, "handins": 1,
                              "disagreement": "its HANDIN.toml says sha256 'ccc'"}
