"""A hint belongs to its rule: a check lost to an exception the rule did not expect says what raised and where.

Real code, graded in the local sandbox (``fixtures/real_code/``): timm's label smoothing asserts
``smoothing < 1.0`` (the prompt allows 1), Bjarten's early stopping writes ``checkpoint.pt`` and calls
``model.state_dict()`` on a ``model`` the prompt allows to be None, and an init that fills linear biases with
0.01 reaches every nested layer. Each check tests one rule: the file-writing check sees the file whatever else
raised, and the nesting check does not fail on a bias value.
"""

from pathlib import Path

from grader.host.grading import grade
from grader.reports.model import Report, Status
from grader.reports.redact import for_audience
from grader.reports.render import render_markdown

REAL_CODE = Path(__file__).resolve().parent / "fixtures" / "real_code"


def _graded(exercise: str, fixture: str, submission: str, tmp_path: Path) -> Report:
    sub = tmp_path / submission
    sub.write_text((REAL_CODE / fixture).read_text())
    report = grade(exercise, sub, sandbox="local")
    assert report.graded, report.not_graded_reason
    return report


def _check(report: Report, function: str):
    return next(c for c in report.checks if c.function == function)


def test_timms_assertion_is_named_with_its_line_not_the_smoothing_hint(tmp_path):
    report = _graded("label_smoothing_ce", "label_smoothing_ce_timm.py", "label_smoothing.py", tmp_path)
    smoothing = _check(report, "test_smoothing")
    assert smoothing.status is Status.ERROR and smoothing.raised == "AssertionError"
    assert smoothing.hint is None
    assert smoothing.message == "your code raised AssertionError at line 18 (`assert smoothing < 1.0`)"
    # test_smoothing is visible: the candidate reads where, and no hint about the smoothing convention.
    card = render_markdown(for_audience(report, "candidate"))
    assert "your code raised AssertionError at line 18 (\\`assert smoothing &lt; 1.0\\`)" in card
    assert "epsilon is spread over ALL C classes" not in card


def test_a_file_writing_early_stopping_is_told_so_though_it_raises_on_model_none(tmp_path):
    report = _graded("early_stopping", "early_stopping_bjarten.py", "early_stopping.py", tmp_path)
    files = _check(report, "test_writes_no_files")
    assert files.status is Status.FAILED, files.message
    assert "checkpoint.pt" in files.message
    defaults = _check(report, "test_defaults")  # step(metric) without a model: Bjarten's model.state_dict()
    assert defaults.status is Status.ERROR and defaults.raised == "AttributeError" and defaults.hint is None
    assert "at line 64 (`torch.save(model.state_dict(), self.path)`)" in defaults.message


def test_a_bias_value_costs_the_bias_check_not_the_nesting_check(tmp_path):
    report = _graded("init_weights", "init_weights_bias_fill.py", "init_weights.py", tmp_path)
    lost = {c.function for c in report.checks if c.lost_points}
    assert lost == {"test_biases_are_zero"}, lost


def test_where_quotes_the_judges_read_of_the_line():
    from grader.judge.outcomes import raised_where

    lines = ["import torch", "    assert smoothing < 1.0", "x = `a`", "y = " + "z" * 200]
    assert raised_where(2, lines) == " at line 2 (`assert smoothing < 1.0`)"
    assert raised_where(3, lines) == " at line 3"  # a backtick would break the quote: the line number alone
    assert raised_where(4, lines).endswith("...`)") and len(raised_where(4, lines)) < 150
    assert raised_where(9, lines) == " at line 9"  # a line the file does not have (the sandbox's word)
    assert raised_where(None, lines) == ""
