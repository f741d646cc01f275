"""One way to show text that came from outside: a submission, a folder, a report, a sums file.

Such text may hold terminal control sequences (ESC ``[2J``, a carriage return that
overwrites a line, a bell) or Unicode bidi controls that make a terminal or a page
show characters in another order than they are stored ("Trojan Source"). Every line
the grader prints with a name, a path or a message from outside goes through
:func:`shown`, which makes those characters visible as escapes instead of obeying
them; every template gets the same through ``grader.reports.templating`` (on top of autoescape).
"""

from __future__ import annotations

import re

#: C0 and C1 control characters except tab and newline, and DEL.
_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f"
#: Bidi embeddings, overrides and isolates, the implicit marks, and the zero-width and
#: line/paragraph separators that change how a line reads without showing themselves.
_INVISIBLE = "\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
#: Lone surrogates: how Python spells file-name bytes that are no UTF-8; no page or terminal can show them.
_SURROGATE = "\ud800-\udfff"
_UNSAFE = re.compile(f"[{_CONTROL}{_INVISIBLE}{_SURROGATE}]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: object, *, newlines: bool = True) -> str:
    """``text`` (anything; ``None`` is empty) with control and bidi characters written as escapes.

    ``newlines=False`` escapes newlines and tabs too, for a value that must stay on one line
    (a file name in a table row, a check id in a one-line message).
    """
    out = _UNSAFE.sub(_escape, "" if text is None else str(text))
    if not newlines:
        out = out.replace("\n", "\\n").replace("\t", "\\t")
    return out


def in_markup(text: object) -> str:
    """:func:`shown`, with rich's ``[markup]`` brackets escaped too: for outside text interpolated
    into a ``console.print("[red]...[/] {}")`` string, where rich would otherwise parse it."""
    from rich.markup import escape

    return escape(shown(text))


#: Terminal escape sequences: CSI (colours, cursor moves), OSC (titles, links) and the two-character kind.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")


def without_ansi(text: str) -> str:
    """``text`` with terminal escape sequences removed, not escaped: library error text (a coloured
    torch or triton message) reads as its words, where :func:`shown` would spell out every ``\\x1b[31m``.
    Applied where check messages are built from outside text; :func:`shown` still guards the output."""
    return _ANSI.sub("", text)
