"""A check error is the grader's only when the reference errors on that check too (issues 26 and 36).

The fixture ``fixtures/broken_check`` has a check that raises ``KeyError`` on a wrong answer (it builds its
message from a table that lacks that answer). Issue 26 made that a check error, never a catch: ``grader
validate`` fails the exercise naming the check (exit 4). But a grading that stopped there let a wrong answer
escape its score ("not graded: a bug in the grader's checks"). Now the judge grades the exercise's reference
on that check, once, in the same kind of sandbox: it does not raise there, so the error is this answer's
failure on the check, counted, with what the check raised kept for the panel. A check that raises on the
reference too (``always_broken``, a copy of the fixture with one more check) is the grader's bug: not graded
(exit 3), named on every scorecard. Graded for real in the local sandbox (a few seconds each).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.host.arbitration import CHECK_ERROR_REASON, COUNTED
from grader.host.grading import grade
from grader.reports.derived import report_flags
from grader.reports.model import Report, Status
from grader.reports.redact import CHECK_ERROR_MESSAGE, for_audience
from grader.reports.render import render_html, render_markdown
from grader.host.validation import validate_exercise
from grader.reports.derived import report_from_json

FIXTURES = Path(__file__).parent / "fixtures"
BROKEN = FIXTURES / "broken_check"
SOLUTIONS = FIXTURES / "broken_check_solutions"
MUTANT = SOLUTIONS / "broken_check" / "mutants" / "returns_input.py"


@pytest.fixture(scope="module")
def counted() -> Report:
    """The wrong answer, graded: its check error is not the reference's."""
    return grade(BROKEN, MUTANT, sandbox="local", solutions_dir=SOLUTIONS)


@pytest.fixture(scope="module")
def always(tmp_path_factory) -> tuple[Path, Path]:
    """A copy of the fixture with one more check, whose own code raises on every answer, the reference's too."""
    root = tmp_path_factory.mktemp("always")
    shutil.copytree(BROKEN, root / "exercises" / "broken_check")
    shutil.copytree(SOLUTIONS / "broken_check", root / "solutions" / "broken_check")
    with open(root / "exercises" / "broken_check" / "checks" / "test_broken_check.py", "a") as f:
        f.write('\n\ndef test_reads_a_key_it_never_gets(sandbox):\n    """Reads a key it never gets"""\n'
                '    sandbox.call("scale", torch.ones(1), 1.0)\n    {}["never"]\n')
    return root / "exercises" / "broken_check", root / "solutions"


@pytest.fixture(scope="module")
def broken(always) -> Report:
    exercise, solutions = always
    return grade(exercise, MUTANT, sandbox="local", solutions_dir=solutions)


def test_a_check_that_raises_on_a_wrong_answer_only_counts_as_that_answers_failure(counted):
    by_name = {c.name: c for c in counted.checks}
    doubles = by_name["Doubles a vector"]
    assert counted.graded and counted.score == 0 and counted.max_score == 3 and counted.check_errors == []
    assert doubles.status is Status.FAILED and doubles.score == 0
    assert doubles.message == COUNTED.format(what="KeyError: (1.0, 2.0)")
    assert doubles.check_error.startswith("the check's own code raised KeyError")  # for the panel
    assert "KeyError" in doubles.details  # the judge's traceback, for the author
    assert [c.name for c in counted.broken_checks] == ["Doubles a vector"]
    assert "check_counted" in report_flags(counted)
    assert by_name["Scales a small tensor"].status is Status.FAILED  # the other check's own outcome stays


def test_a_check_that_raises_on_the_reference_too_makes_the_grading_not_graded_naming_it(broken):
    by_name = {c.name: c for c in broken.checks}
    assert not broken.graded and broken.score == broken.max_score == 0
    assert broken.not_graded_reason == CHECK_ERROR_REASON  # anyone's; which check and what it raised: the panel's
    assert "test_broken_check.py::test_reads_a_key_it_never_gets: the check's own code raised KeyError" in \
        broken.not_graded_detail
    assert [c.name for c in broken.check_errors] == ["Reads a key it never gets"]
    assert by_name["Doubles a vector"].status is Status.FAILED and by_name["Doubles a vector"].check_error
    assert by_name["Scales a small tensor"].status is Status.FAILED  # the other check's own outcome stays
    assert broken.diagnosis == [] and broken.follow_ups == []


def test_the_reference_is_graded_as_usual():
    report = grade(BROKEN, SOLUTIONS / "broken_check" / "broken_check.py", sandbox="local", solutions_dir=SOLUTIONS)
    assert report.graded and report.score == report.max_score == 3 and not report.check_errors


def test_every_format_says_the_check_broke_not_the_submission(broken):
    for text in (render_html(broken), render_markdown(broken)):
        assert "NOT GRADED — a check of the grader broke" in text and "Reads a key it never gets" in text
        assert "not the submission" in text and "NOT GRADED — rerun" not in text
    candidate = for_audience(broken, "candidate")
    [check] = [c for c in candidate.checks if c.status is Status.CHECK_ERROR]
    assert check.message == CHECK_ERROR_MESSAGE and check.details == ""  # the judge's traceback is not theirs
    assert candidate.not_graded_reason == CHECK_ERROR_REASON and candidate.not_graded_detail is None  # no id, no error
    assert broken.not_graded_detail and broken.check_errors[0].id in broken.not_graded_detail  # the panel's


def test_validate_fails_the_exercise_naming_the_check_and_counts_no_catch():
    result = validate_exercise(BROKEN, sandbox="local", solutions_dir=SOLUTIONS)
    assert not result.ok
    mutant = next(v for v in result.verdicts if v.kind == "mutant")
    assert mutant.problem.startswith("check error: Doubles a vector [test_broken_check.py::test_doubles]")
    assert result.catches()["Doubles a vector"] == []  # a crash of the check is not a catch
    assert result.check_errors == {"Doubles a vector": ["returns_input.py"]}


def test_validate_cli_exits_4_not_3_and_names_the_check():
    r = CliRunner().invoke(main, ["validate", "broken_check", "--exercise-root", str(FIXTURES), "--sandbox", "local",
                                  "--solutions-root", str(SOLUTIONS), "--rules", "skip"],
                           catch_exceptions=False)
    out = " ".join(r.output.split())
    assert r.exit_code == 4, r.output  # the exercise's bug, not infrastructure: rerunning will not help
    assert "broken_check: check Doubles a vector raised an error of its own (a bug in the check, not a catch) " \
           "on returns_input.py" in out


def test_submit_exits_3_with_nothing_scored(always, tmp_path):
    exercise, _ = always
    r = CliRunner().invoke(main, ["submit", "broken_check", str(MUTANT), "--exercise-root", str(exercise.parent),
                                  "--sandbox", "local", "--no-history",
                                  "--audience", "panel", "--json", str(tmp_path / "r.json")],
                           env={"GRADER_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "100"})
    assert r.exit_code == 3, r.output
    assert "NOT GRADED — a check of the grader broke" in r.output and "Reads a key it never gets" in r.output
    stored = report_from_json((tmp_path / "r.json").read_text())
    assert [c.status for c in stored.checks] == [Status.FAILED, Status.FAILED, Status.CHECK_ERROR]


def test_regrade_carries_the_check_error_and_compares_its_status(always, broken, tmp_path):
    from grader.evidence.regrade import regrade

    exercise, _ = always
    result = regrade(broken, MUTANT, exercise_root=exercise.parent, sandbox="local")
    assert not result.new.graded and [c.name for c in result.new.check_errors] == ["Reads a key it never gets"]
    assert result.differences == []  # the same checks, the same statuses, check_error included
    r = CliRunner().invoke(main, ["regrade", str(_write(broken, tmp_path)), str(MUTANT), "--sandbox", "local",
                                  "--exercise-root", str(exercise.parent)])
    assert r.exit_code == 3 and "raised an error of its own" in " ".join(r.output.split()), r.output


def _write(report: Report, folder: Path) -> Path:
    path = folder / "report.json"
    path.write_text(report.to_json())
    return path


def test_a_candidate_reads_that_the_check_counted_as_failed_not_what_it_raised(counted):
    from grader.reports.redact import CHECK_COUNTED_MESSAGE

    candidate = for_audience(counted, "candidate")
    [check] = [c for c in candidate.checks if c.name == "Doubles a vector"]
    assert check.message == CHECK_COUNTED_MESSAGE and check.check_error is None and check.details == ""
    assert check.status is Status.FAILED and check.score == 0
