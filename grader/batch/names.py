"""Which folder and file names from a submissions folder the batch can use as they are.

A candidate's folder name becomes a row's key, a folder under the output folder,
a SQLite value and a cell in a CSV; a file name travels with the job. A name
that could escape a folder (``..``, a separator), that a terminal or a page would
show other than it is (control characters, bidi overrides, invisible marks, a form
other than Unicode's composed NFC), that is not text (bytes that are no UTF-8) or
that is absurdly long is not used: its folder becomes a layout problem or an
unreadable row, saying why, and the batch goes on. Names that read alike (they differ
only by normalisation, case or confusable characters: ``josé`` twice, Latin ``a`` and
Cyrillic ``а``) are a layout problem naming each (:func:`lookalikes`).
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable

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
    if unicodedata.normalize("NFC", name) != name:
        return (f"is not in Unicode's composed form (NFC): it reads as {unicodedata.normalize('NFC', name)!r} but "
                "is stored as other code points; rename it to its NFC form")
    if len(name) > MAX_NAME:
        return f"is {len(name)} characters long; the limit is {MAX_NAME}"
    return None


@functools.lru_cache(maxsize=1)
def _confusables() -> dict:
    from confusable_homoglyphs.confusables import confusables_data

    return confusables_data


def _prototype(char: str) -> str:
    """The one character ``char`` stands for among those Unicode lists as confusable with it (the least)."""
    alike = [h["c"] for h in _confusables().get(char, ()) if len(h["c"]) == 1]
    return min([char, *alike])


def skeleton(name: str) -> str:
    """What ``name`` looks like: compatibility-normalised (NFKC), case folded, each character replaced by
    the one it is confusable with, so names that read alike have the same skeleton."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(_prototype(c) for c in unicodedata.normalize("NFKC", folded))


def lookalikes(names: Iterable[str]) -> list[list[str]]:
    """Groups (sorted, of two or more) of distinct names that read alike: the same :func:`skeleton`."""
    groups: dict[str, set[str]] = {}
    for name in names:
        groups.setdefault(skeleton(name), set()).add(name)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def lookalike_problem(group: list[str], what: str) -> str:
    """A layout problem naming every name of ``group`` (``what``: "candidate folders", ...), shown as escapes
    where they differ in code points only."""
    named = " and ".join(_both(n) for n in group)
    return (f"{named} ({what}) read alike: they differ only by Unicode normalisation, case or confusable "
            "characters, so a panel would see two rows it cannot tell apart; rename one, or merge them if they "
            "are one person")


def _both(name: str) -> str:
    escaped = name.encode("ascii", "backslashreplace").decode()
    return f"{shown(name, newlines=False)!r}" + (f" ({escaped})" if escaped != name else "")
