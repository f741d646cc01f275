"""Which folder and file names from a submissions folder the batch can use as they are.

A candidate's folder name becomes a row's key, a folder under the output folder,
a SQLite value and a cell in a CSV; a file name travels with the job. A name
that could escape a folder (``..``, a separator), that a terminal or a page would
show other than it is (control characters, bidi overrides, invisible marks), that
is not text (bytes that are no UTF-8: SQLite and the CSV cannot store them) or
that is absurdly long is not used: its folder becomes a layout problem or an
unreadable row, saying why, and the batch goes on.
"""

from __future__ import annotations

from grader.untrusted import shown

#: Longer names are refused: they make unreadable tables and come near the 255-byte file name limit.
MAX_NAME = 100


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be used as a candidate, exercise or file name; ``None`` when it can."""
    if name in ("", ".", ".."):
        return "is not a usable name"
    if "/" in name or "\\" in name:
        return "holds a path separator"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid UTF-8"
    if shown(name, newlines=False) != name:  # the one rule for text that would not show as stored
        return "holds control or invisible characters"
    if len(name) > MAX_NAME:
        return f"is {len(name)} characters long; the limit is {MAX_NAME}"
    return None
