"""grader.untrusted.shown: the one escaping function for text from outside."""

from grader.untrusted import shown


def test_terminal_controls_are_shown_not_obeyed():
    assert shown("a\x1b[2Jb\rc\x07") == "a\\x1b[2Jb\\x0dc\\x07"
    assert shown("\x9b31m") == "\\x9b31m"  # a C1 CSI


def test_bidi_overrides_and_isolates_are_shown():
    # "Trojan Source": RLO makes 'evil' read as 'live' on a terminal or a page.
    assert shown("file\u202eevil.py") == "file\\u202eevil.py"
    assert shown("\u2066x\u2069\u200f\ufeff") == "\\u2066x\\u2069\\u200f\\ufeff"


def test_ordinary_text_is_unchanged():
    text = "attention.py: résumé ✓ 注意 tab\there\nnext line"
    assert shown(text) == text


def test_one_line_mode_escapes_newlines_and_tabs():
    assert shown("a\nb\tc", newlines=False) == "a\\nb\\tc"


def test_none_and_non_strings():
    assert shown(None) == ""
    assert shown(3) == "3"


def test_every_template_shows_bidi_and_control_characters_escaped():
    """The scorecards (HTML, Markdown) and the panel's Jinja set-up escape at the edge, once."""
    from grader.reports.model import CheckResult, Report, Status, Visibility
    from grader.reports.render import render_html, render_markdown

    evil = "x\u202ey\x1b[2J"
    report = Report(exercise="toy", title=evil, graded=True, score=0, max_score=1, checks=[
        CheckResult(id="t.py::a", name=evil, status=Status.FAILED, score=0, max_score=1,
                    visibility=Visibility.VISIBLE, message=evil)])
    for page in (render_html(report), render_markdown(report)):
        assert "\u202e" not in page and "\x1b" not in page
        assert "\\u202e" in page and "\\x1b" in page


def test_batch_progress_lines_show_a_reason_from_outside_escaped():
    """A not-graded reason can quote the judge's log (candidate output): shown, never obeyed or parsed as markup."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from grader.cli.batch_progress import ProgressListener
    from grader.reports.model import Report

    out = io.StringIO()
    listener = ProgressListener(Console(file=out, force_terminal=False, width=200))
    found = SimpleNamespace(candidate="ann", exercise="toy")
    with listener:
        listener.planned(to_grade=1, already=0)
        listener.retrying(found, "judge died: \x1b[2J[bold]boom\u202e", 1)
        listener.graded(found, Report(exercise="toy", graded=False, not_graded_reason="\x1b]0;owned\x07"))
    text = out.getvalue()
    assert "\x1b[2J" not in text and "\u202e" not in text and "\x1b]0;" not in text
    assert "\\x1b[2J[bold]boom\\u202e" in text and "\\x1b]0;owned\\x07" in text
