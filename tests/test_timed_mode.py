"""Tests for timed mode: the clock (``grader.practice.clock``), ``grader start``, and timing on the scorecard.

No test waits: every moment is given as ``now``. ``conftest.py`` gives every test
its own ``GRADER_DATA_DIR``.
"""

from __future__ import annotations

import datetime as dt

import pytest
from click.testing import CliRunner
from rich.console import Console

from grader.cli import main
from grader.cli.start_cmd import DEFAULT_MINUTES
from grader.errors import UsageError
from grader.practice import clock
from grader.reports.model import CheckResult, Report, Status, Timing, Visibility
from grader.reports.headline import fmt_duration
from grader.reports.render import render_html, render_markdown
from grader.reports.terminal import render_terminal

T0 = dt.datetime(2025, 3, 1, 9, 0, tzinfo=dt.timezone.utc)
ENV = {"COLUMNS": "80", "NO_COLOR": "1"}
ON_TIME = Timing(clock_started_at="2025-03-01T09:00:00+00:00", limit_minutes=45, elapsed_s=1390.4, over_limit=False)
LATE = Timing(clock_started_at="2025-03-01T09:00:00+00:00", limit_minutes=45, elapsed_s=3003.0, over_limit=True)


def at(minutes: float) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


def invoke(*args):
    return CliRunner().invoke(main, list(args), env=ENV)


# --- the clock ---------------------------------------------------------------------------------


def test_start_then_current_and_deadline():
    c = clock.start("attention", 30, now=T0)
    assert c.deadline == at(30)
    assert clock.current("attention") == c
    assert clock.current("collate_fn") is None


def test_a_running_clock_is_refused_with_since_when_and_restart():
    clock.start("attention", 45, now=T0)
    with pytest.raises(UsageError) as e:
        clock.start("attention", 45, now=at(23 + 1 / 6))
    msg = f"{e.value} {e.value.hint}"
    assert "already running" in msg and "23 min 10 s ago" in msg and "--restart" in msg
    assert clock.fmt_local(T0) in msg
    assert clock.current("attention").started_at == T0  # untouched


def test_restart_starts_again_from_zero():
    clock.start("attention", 45, now=T0)
    c = clock.start("attention", 20, restart=True, now=at(50))
    assert clock.current("attention") == c and c.started_at == at(50) and c.minutes == 20


def test_stop_ends_timed_mode_and_says_when_none_ran():
    started = clock.start("attention", now=T0)
    assert clock.stop("attention") == started
    assert clock.current("attention") is None and clock.timing_for("attention") is None
    assert clock.stop("attention") is None


@pytest.mark.parametrize(("minutes", "shown"), [(0, "0"), (-5, "-5"), (float("nan"), "nan"), (float("inf"), "inf")])
def test_minutes_must_be_above_zero(minutes, shown):
    with pytest.raises(UsageError, match=f"--minutes .* got {shown}\\."):
        clock.start("attention", minutes, now=T0)
    assert clock.current("attention") is None


def test_timing_within_the_limit():
    clock.start("attention", 45, now=T0)
    t = clock.timing_for("attention", now=at(23 + 1 / 6))
    assert t == Timing(clock_started_at="2025-03-01T09:00:00+00:00", limit_minutes=45, elapsed_s=1390.0,
                       over_limit=False)


def test_timing_after_the_deadline_is_over_the_limit():
    clock.start("attention", 45, now=T0)
    t = clock.timing_for("attention", now=at(50.05))
    assert t.over_limit and t.elapsed_s == pytest.approx(3003.0)
    assert not clock.timing_for("attention", now=at(45)).over_limit  # exactly on the limit is on time


def test_a_now_before_the_start_is_no_negative_time():
    clock.start("attention", 45, now=T0)
    t = clock.timing_for("attention", now=at(-10))
    assert t.elapsed_s == 0 and not t.over_limit


def test_timing_is_none_outside_timed_mode():
    assert clock.timing_for("attention") is None


def test_fmt_duration():
    assert [fmt_duration(s) for s in (0, 42.4, 60, 1390.4, 3605)] == ["0 s", "42 s", "1 min", "23 min 10 s", "1 h 5 s"]


# --- grader start ------------------------------------------------------------------------------


def test_cli_start_says_when_it_ends_and_what_submit_does():
    r = invoke("start", "attention", "--minutes", "30")
    assert r.exit_code == 0, r.output
    assert "30 min" in r.output and "ends at" in r.output and "grader submit attention" in r.output
    assert clock.current("attention").minutes == 30
    assert all(len(line) <= 80 for line in r.output.splitlines())


def test_cli_refuses_a_running_clock_then_restarts_and_stops():
    assert invoke("start", "attention").exit_code == 0
    again = invoke("start", "attention")
    assert again.exit_code == 2 and "already running" in again.output and "--restart" in again.output
    assert "Traceback" not in again.output
    restarted = invoke("start", "attention", "--restart", "--minutes", "10")
    assert restarted.exit_code == 0 and "restarted" in restarted.output
    assert clock.current("attention").minutes == 10
    stopped = invoke("start", "attention", "--stop")
    assert stopped.exit_code == 0 and "stopped" in stopped.output and clock.current("attention") is None
    none = invoke("start", "attention", "--stop")
    assert none.exit_code == 0 and "No clock was running" in none.output


def test_cli_refuses_unknown_exercise_and_bad_minutes():
    unknown = invoke("start", "no-such-exercise")
    assert unknown.exit_code == 2 and "Known exercises" in unknown.output
    zero = invoke("start", "attention", "--minutes", "0")
    assert zero.exit_code == 2 and "--minutes" in zero.output and "got 0." in zero.output
    assert clock.current("attention") is None


def test_cli_default_minutes_is_the_clocks():
    assert DEFAULT_MINUTES == clock.DEFAULT_MINUTES


# --- the scorecard -----------------------------------------------------------------------------


def timed_report(timing: Timing | None) -> Report:
    check = CheckResult(id="test_a.py::test_a", name="Output has the right shape", status=Status.PASSED,
                        score=1, max_score=1, visibility=Visibility.VISIBLE)
    return Report(exercise="attention", title="Attention", graded=True, score=1, max_score=1, checks=[check],
                  timing=timing)


def terminal_text(report: Report, audience: str) -> str:
    console = Console(width=80, no_color=True, record=True)
    render_terminal(report, console, audience=audience)
    return console.export_text()


def renderings(report: Report, audience: str) -> dict[str, str]:
    return {"terminal": terminal_text(report, audience), "html": render_html(report, audience=audience),
            "markdown": render_markdown(report, audience=audience)}


@pytest.mark.parametrize("audience", ["candidate", "panel"])
def test_on_time_submission_shows_elapsed_time_everywhere(audience):
    for fmt, text in renderings(timed_report(ON_TIME), audience).items():
        assert "Time: 23 min 10 s of 45 min, on time" in text, fmt
        assert "LATE" not in text, fmt


@pytest.mark.parametrize("audience", ["candidate", "panel"])
def test_late_submission_is_marked_in_words_everywhere(audience):
    for fmt, text in renderings(timed_report(LATE), audience).items():
        assert "Time: 50 min 3 s of 45 min" in text, fmt
        assert "LATE: submitted 5 min 3 s after the 45 min limit" in text, fmt
        if fmt == "terminal":
            assert all(len(line) <= 80 for line in text.splitlines())


@pytest.mark.parametrize("audience", ["candidate", "panel"])
def test_no_timing_line_outside_timed_mode(audience):
    for fmt, text in renderings(timed_report(None), audience).items():
        assert "Time:" not in text and "LATE" not in text, fmt


def test_not_graded_report_still_shows_its_timing():
    report = Report(exercise="attention", graded=False, not_graded_reason="no engine", timing=LATE)
    assert "LATE: submitted" in terminal_text(report, "candidate")
    assert "LATE: submitted" in render_html(report) and "LATE: submitted" in render_markdown(report)


@pytest.mark.parametrize("audience", ["candidate", "panel"])
def test_a_short_limit_reads_in_the_units_of_the_time_spent(audience):
    """Issue 26: a 3-second limit read "Time: 5 s of 0.05 min"."""
    short = Timing(clock_started_at="2025-03-01T09:00:00+00:00", limit_minutes=0.05, elapsed_s=5.0, over_limit=True)
    for fmt, text in renderings(timed_report(short), audience).items():
        assert "Time: 5 s of 3 s" in text and "0.05 min" not in text, fmt
        assert "LATE: submitted 2 s after the 3 s limit" in text, fmt
