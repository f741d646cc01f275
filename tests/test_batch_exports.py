"""summary.csv, results.jsonl and the Gradescope files agree with the rows; not graded is never 0."""

from __future__ import annotations

import csv
import json
import re

from grader.batch import exports
from grader.batch.model import Row, RowStatus
from grader.reports.model import CheckResult, Diagnosis, Report, Status, Visibility


def report(score_a: float, status_b: Status = Status.FAILED) -> Report:
    checks = [
        CheckResult(id="test_a.py::test_one", name="one", status=Status.PASSED if score_a else Status.FAILED,
                    score=score_a, max_score=2, visibility=Visibility.VISIBLE, message="" if score_a else "wrong"),
        CheckResult(id="test_a.py::test_two", name="two", status=status_b, score=0, max_score=3,
                    visibility=Visibility.HIDDEN, message="hidden detail"),
    ]
    return Report(exercise="toy", graded=True, checks=checks, score=score_a, max_score=5)


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
    assert table[0] == ["candidate", "exercise", "score", "max_score", "status",
                        "toy::test_a.py::test_one", "toy::test_a.py::test_two", "flags", "diagnosis", "reason",
                        "published"]
    assert table[1] == ["ann", "toy", "2", "5", "graded", "2", "0", "", "", "", ""]
    assert table[2][0] == "'=HYPERLINK(\"x\")"  # a formula is defused, not run by a spreadsheet
    assert table[3][:5] == ["cid", "toy", "", "", "not_graded"] and "rerun" in table[3][-2]
    assert table[4][:5] == ["dee", "toy", "", "", "missing"]


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
    stored = Report.from_json((tmp_path / "candidates" / "ann" / "toy.json").read_text())
    assert stored.candidate == "ann"
    assert "Candidate ann · Exercise" in render_markdown(stored)
    console = Console(width=80, no_color=True, record=True)
    render_terminal(stored, console)
    assert "Candidate: ann" in console.export_text()
    assert "Candidate" not in render_markdown(report(2))  # `grader submit` knows no candidate: nothing shown
