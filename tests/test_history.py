"""Tests for the practice history (``grader.practice.history``) and ``grader history``.

Reports are built by hand; nothing is graded. ``conftest.py`` gives every test its
own ``GRADER_DATA_DIR``, so these never touch a real history.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.practice import history
from grader.reports.model import CheckResult, Environment, Report, Status, Timing, Visibility
from grader.reports.redact import opaque_id

P, F, S = Status.PASSED, Status.FAILED, Status.SKIPPED
NAMES = {
    "a": "Output has the right shape",
    "b": "Masked positions get zero weight, even when a whole row is masked out",
    "c": "Matches the reference on random shapes",
    "d": "Runs on CUDA tensors",
}
ENV = {"COLUMNS": "80", "NO_COLOR": "1"}


def report(exercise: str = "attention", fingerprint: str = "fp1", timing: Timing | None = None, **statuses) -> Report:
    """A graded report whose checks ``a``.. have the given statuses (1 point each, 2 for ``c``)."""
    checks = []
    for key, status in statuses.items():
        max_score = 2 if key == "c" else 1
        checks.append(CheckResult(
            id=f"test_{key}.py::test_{key}", name=NAMES[key], status=status,
            score=max_score if status is P else 0, max_score=max_score, visibility=Visibility.HIDDEN))
    counted = [c for c in checks if c.status is not S]
    return Report(exercise=exercise, graded=True, checks=checks,
                  score=sum(c.score for c in counted), max_score=sum(c.max_score for c in counted),
                  environment=Environment(exercise_fingerprint=fingerprint, sandbox="local",
                                          submission_sha256="ab" * 32),
                  timing=timing)


def invoke(*args):
    return CliRunner().invoke(main, list(args), env=ENV)


def assert_fits_80(output: str) -> None:
    too_wide = [line for line in output.splitlines() if len(line) > 80]
    assert not too_wide, too_wide


# --- the store --------------------------------------------------------------------------------


def test_record_and_read_back_oldest_first():
    first = history.record(report(a=P, b=F, c=F))
    second = history.record(report(a=P, b=P, c=F))
    other = history.record(report("collate_fn", a=F))
    assert first.id < second.id < other.id
    assert [a.id for a in history.attempts()] == [first.id, second.id, other.id]
    assert [a.id for a in history.attempts("attention")] == [first.id, second.id]
    again = history.attempts("attention")[1]
    assert (again.score, again.max_score, again.sandbox, again.fingerprint) == (2, 4, "local", "fp1")
    # stored as the candidate's copy shows them: these checks are hidden, so by their hashed ids
    assert again.checks[opaque_id("test_b.py::test_b")].passed and not again.checks[opaque_id("test_c.py::test_c")].passed
    assert again.elapsed_s is None and again.over_limit is None


def test_a_hidden_checks_inputs_are_not_stored_nor_named_in_flips():
    """A parametrized hidden check's id and name hold its inputs; the store and the flips hold neither."""
    def attempt(status):
        check = CheckResult(id="test_m.py::test_rows[918273-True]", name="Rows add up [918273-True]",
                            status=status, score=0, max_score=1, visibility=Visibility.HIDDEN)
        return history.record(Report(exercise="attention", graded=True, checks=[check], max_score=1))

    before, after = attempt(F), attempt(P)
    assert history.flips(before, after).fixed == ["Rows add up [case 1]"]
    from grader.practice.store import connect

    with connect() as conn:
        stored = " ".join(row["checks"] for row in conn.execute("SELECT checks FROM attempts"))
    assert "918273" not in stored


def test_timing_is_stored():
    timing = Timing(clock_started_at="2025-01-01T10:00:00+00:00", limit_minutes=45, elapsed_s=3003.0, over_limit=True)
    a = history.record(report(timing=timing, a=P))
    assert history.attempts()[0].elapsed_s == 3003.0 and a.over_limit is True


def test_not_graded_report_is_not_an_attempt():
    assert history.record(Report(exercise="attention", graded=False, not_graded_reason="no engine")) is None
    assert history.attempts() == []


def test_best_scores_take_the_highest_fraction_and_the_earliest_tie():
    history.record(report(a=P, b=F, c=F))  # 1/4
    best = history.record(report(a=P, b=P, c=F))  # 2/4
    history.record(report(a=F, b=F, c=P))  # 2/4 again: not better
    solved = history.record(report("collate_fn", a=P))
    scores = history.best_scores()
    assert scores["attention"].id == best.id and scores["collate_fn"].id == solved.id


def test_flips_name_fixed_and_broken_checks():
    before = history.record(report(a=P, b=F, c=F))
    after = history.record(report(a=F, b=P, c=P))
    f = history.flips(before, after)
    assert f.fixed == [NAMES["b"], NAMES["c"]] and f.broke == [NAMES["a"]]
    assert f and not f.exercise_changed


def test_flips_flag_a_changed_exercise_and_ignore_skipped_checks():
    before = history.record(report(a=P, d=P))
    after = history.record(report(fingerprint="fp2", a=P, d=S))  # no GPU this time: not "broke"
    f = history.flips(before, after)
    assert f.exercise_changed and not f and f.broke == []


# --- the command -------------------------------------------------------------------------------


def test_empty_history_points_to_submit():
    r = invoke("history")
    assert r.exit_code == 0 and "No graded attempts" in r.output and "grader submit" in r.output


def test_empty_history_for_one_name_lists_exercises_that_have_attempts():
    history.record(report("collate_fn", a=P))
    r = invoke("history", "attention")
    assert r.exit_code == 0 and "grader submit attention" in r.output and "collate_fn" in r.output


def test_history_of_a_name_no_exercise_has_is_a_usage_error_with_the_nearest_name():
    history.record(report("collate_fn", a=P))
    r = invoke("history", "attentoin")
    assert r.exit_code == 2, r.output
    assert "No exercise named 'attentoin'. Did you mean attention?" in r.output and "Traceback" not in r.output
    history.record(report("retired_exercise", a=P))  # gone from the catalog, still in the history: shown
    assert invoke("history", "retired_exercise").exit_code == 0


def test_history_shows_scores_flips_and_best_within_80_columns():
    history.record(report(a=P, b=F, c=F))
    history.record(report("collate_fn", a=F))
    history.record(report(a=F, b=P, c=F))
    history.record(report(fingerprint="fp2", a=F, b=P, c=P))
    r = invoke("history")
    assert r.exit_code == 0, r.output
    assert_fits_80(r.output)
    flat = " ".join(r.output.split())  # long names wrap across lines
    assert "first attempt" in flat and "1/4" in flat and "0/1" in flat
    assert "fixed 1, broke 1" in flat and "fixed 1 (the exercise changed in between)" in flat
    lines = r.output.splitlines()  # one flipped check per line, each starting its own line of the cell
    fixed_b = next(i for i, line in enumerate(lines) if f"fixed: {NAMES['b'][:20]}" in line)
    broke_a = next(i for i, line in enumerate(lines) if f"broke: {NAMES['a'][:20]}" in line)
    assert broke_a > fixed_b
    assert any(f"fixed: {NAMES['c'][:10]}" in line for line in lines)
    assert "Exercise" in r.output and "Best scores" in r.output
    assert "attention: 3/4 (attempt #3" in flat and "collate_fn: 0/1 (attempt #1" in flat


def test_history_for_one_exercise_marks_a_late_attempt_in_words():
    late = Timing(clock_started_at="2025-01-01T10:00:00+00:00", limit_minutes=45, elapsed_s=3003.0, over_limit=True)
    history.record(report("collate_fn", a=P))
    history.record(report(a=F))
    history.record(report(timing=late, a=P))
    r = invoke("history", "attention")
    assert r.exit_code == 0, r.output
    assert_fits_80(r.output)
    lines = r.output.splitlines()
    row = next(i for i, line in enumerate(lines) if "50 min 3 s" in line)
    assert lines[row + 1].split()[0] == "LATE"  # the time cell's second line
    assert "fixed 1" in lines[row] and f"fixed: {NAMES['a']}" in lines[row + 1]  # counts, then one check a line
    assert "collate_fn" not in r.output and "Exercise" not in r.output
    assert "\x1b[" not in r.output  # NO_COLOR and no terminal: plain text


@pytest.mark.parametrize("line", ["#", "When", "Score", "Changes"])
def test_history_table_has_its_columns(line):
    history.record(report(a=P))
    out = invoke("history").output
    assert line in out and "Time" not in out  # a time column only where an attempt was timed (above)
