"""No hidden input reaches a candidate: not through a later visible check, nor any format of the candidate view.

The exercise (tests/fixtures/secret) lists its hidden checks first; the submission
remembers every value it is sent and prints, raises and "uses a forbidden API" on
every call, so whatever it saw earlier would show in the next check's output,
message, details or forbidden hits. The secrets also sit in a hidden check's
parametrize id.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from grader.host.grading import grade
from grader.reports.model import Status, Visibility
from grader.reports.redact import for_audience
from grader.reports.render import render_html, render_markdown
from grader.reports.terminal import render_terminal
from grader.reports.derived import report_from_json
from grader.reports.warning import WarningCode

SECRET = Path(__file__).parent / "fixtures" / "secret"
RECORDER = Path(__file__).parent / "fixtures" / "secret_submissions" / "records_inputs.py"
SECRETS = ("918273645", "918273646", "hush-5551212")


def candidate_formats(report) -> dict[str, str]:
    """Every candidate-facing rendering of ``report``, as ``grader submit --audience candidate`` writes them."""
    console = Console(width=100, no_color=True, record=True, file=io.StringIO())
    render_terminal(report, console, audience="candidate")
    copy = for_audience(report, "candidate")
    return {"terminal": console.export_text(), "json": copy.to_json(),
            "html": render_html(copy, audience="candidate"), "markdown": render_markdown(copy, audience="candidate")}


@pytest.fixture(scope="module")
def recorded():
    return grade(SECRET, RECORDER, sandbox="local")


def test_visible_checks_run_before_any_hidden_input_is_sent(recorded):
    visible = next(c for c in recorded.checks if c.visibility is Visibility.VISIBLE)
    assert visible.status is Status.FAILED  # it used a forbidden API
    assert visible.message.endswith("): seen so far: 7)")  # the only value it had seen
    assert "your code raised ValueError at line" in visible.message
    assert visible.output == "seen so far: 7\n"


@pytest.mark.parametrize("audience_format", ["terminal", "json", "html", "markdown"])
def test_no_hidden_input_in_any_candidate_format(recorded, audience_format):
    text = candidate_formats(recorded)[audience_format]
    assert "seen so far: 7" in text or audience_format != "json"  # the visible check's own details are kept
    for secret in SECRETS:
        assert secret not in text, f"{secret} leaked into the candidate's {audience_format}"


def test_the_panel_still_sees_everything(recorded):
    panel = recorded.to_json()
    assert all(secret in panel for secret in SECRETS)
    hidden = [c for c in recorded.checks if c.visibility is Visibility.HIDDEN]
    assert {c.status for c in hidden} == {Status.FAILED} and len(hidden) == 3  # forbidden API, and raised
    assert hidden[0].name == "hidden param [918273645]"


def test_the_candidate_sees_each_hidden_check_by_a_safe_name(recorded):
    copy = for_audience(recorded, "candidate")
    names = [c.name for c in copy.checks]
    assert names == ["hidden param [case 1]", "hidden param [case 2]", "Echoes a hidden string", "Echoes a public number"]
    assert {h.where for h in copy.forbidden if h.how == "runtime"} == {*names[:3], "test_secret.py::test_visible"}
    undocumented = [w.message for w in copy.warned(WarningCode.UNDOCUMENTED_CHECK)]
    assert any("check test_secret.py::test_hidden_param has no docstring" in w for w in undocumented)


def test_the_panel_json_keeps_the_authors_order(recorded):
    """Checks run visible first, but the report lists them as the checks file does."""
    assert [c.id.split("::")[-1] for c in recorded.checks] == [
        "test_hidden_param[918273645]", "test_hidden_param[918273646]", "test_hidden_body", "test_visible"]


def test_a_stored_candidate_copy_rerenders_without_secrets(recorded):
    """A candidate JSON read back and rendered again (either audience) holds no more than it did."""
    copy = report_from_json(for_audience(recorded, "candidate").to_json())
    console = Console(width=100, no_color=True, record=True, file=io.StringIO())
    render_terminal(copy, console, audience="panel")
    for text in (console.export_text(), render_html(copy, audience="panel"), render_markdown(copy)):
        for secret in SECRETS:
            assert secret not in text
    assert json.loads(copy.to_json())["audience"] == "candidate"


def test_a_judge_that_died_mid_grading_shows_the_candidate_neither_the_check_nor_the_log():
    """The judge's log may quote a hidden check; the panel gets it under the reason, a candidate does not."""
    from grader.exercise import load_exercise
    from grader.host.fill import fill as _fill
    from grader.subset.audit import SourceAudit
    from grader.host.runner import JudgeRun
    from grader.wire.spec import CheckSpec
    from grader.reports.model import Environment, Report, Visibility

    hidden_id = "test_secret.py::test_hidden_param[918273645]"
    spec = CheckSpec(id=hidden_id, name="hidden param [918273645]", points=1.0, visibility=Visibility.HIDDEN,
                     documented=False)
    run = JudgeRun(collected=[spec], log_tail="F\nE   assert 918273646 == 918273645\n")
    report = Report(exercise="secret", graded=True, environment=Environment(sandbox="docker"))
    report = _fill(report, load_exercise(SECRET), run, SourceAudit())
    assert not report.graded and "918273645" in report.not_graded_detail  # the panel's copy keeps it all
    assert report.not_graded_reason == "the judge ended without an outcome for check 1 of 1"
    for audience_format, text in candidate_formats(report).items():
        assert "the judge ended without an outcome for check 1 of 1" in text
        for secret in SECRETS:
            assert secret not in text, f"{secret} leaked into the candidate's {audience_format}"


# ------------------------------------------------------------------ the sandbox's own words (issue 25)

FORGER = Path(__file__).parent / "fixtures" / "secret_submissions" / "forges_the_worker.py"


@pytest.fixture(scope="module")
def forged():
    return grade(SECRET, FORGER, sandbox="local")


@pytest.mark.parametrize("audience_format", ["terminal", "json", "html", "markdown"])
def test_a_forged_hit_or_tampering_text_never_reaches_a_candidate(forged, audience_format):
    """Before issue 25 the forged hit's name (every hidden input) was printed on the candidate's scorecard."""
    text = candidate_formats(forged)[audience_format]
    for secret in SECRETS:
        assert secret not in text, f"{secret} leaked into the candidate's {audience_format}"
    assert "seen:" not in text and "tripwire was switched off" not in text


def test_the_forgery_never_runs_and_the_panel_holds_no_word_of_it(forged):
    """The forging file reaches into the worker to write its replies, which leaves the language subset: the judge
    refuses it from its source and no sandbox opens. (The sandbox's half, hits read as indices the judge names and
    any other reply a protocol failure, is proven on its own in test_sandbox_client.)"""
    assert forged.graded and forged.violations and all(c.not_run for c in forged.checks)
    panel = forged.to_json()
    assert "seen:" not in panel and "tripwire was switched off" not in panel
    assert not [f for f in forged.findings if f.how == "runtime"]