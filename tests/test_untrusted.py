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
