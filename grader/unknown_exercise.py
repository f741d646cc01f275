"""The one error for an exercise name the grader does not know, with the nearest known name.

Every command that takes a name (submit, init, pack, show, start, history, batch
--only, regrade's stored names) raises :class:`UnknownExercise`, so a typo always
gets the same answer: what was not found, "did you mean ...?" when a known name is
close, and the known names.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import PurePath

from grader.errors import UsageError
from grader.untrusted import shown

#: How alike (difflib's ratio) a known name must be to be offered; below it, a guess misleads more than it helps.
CUTOFF = 0.6


def nearest(spec: str, known: Iterable[str]) -> str | None:
    """The known name ``spec`` most likely meant: the one it begins (``mixed`` -> ``mixed_precision_step``),
    else the closest spelling (``attentio`` -> ``attention``); ``None`` when nothing is close.

    A path is matched by its last part, so ``exercises/atention`` still finds ``attention``.
    """
    names = sorted(set(known))
    word = PurePath(str(spec)).name.lower() or str(spec).lower()
    by_prefix = [n for n in names if n.lower().startswith(word)]
    if len(by_prefix) == 1:
        return by_prefix[0]
    close = difflib.get_close_matches(word, names, n=1, cutoff=CUTOFF)
    return close[0] if close else None


class UnknownExercise(UsageError):
    """``spec`` names no known exercise; ``what`` says where it was looked for (starts the message)."""

    def __init__(self, spec: object, known: Iterable[str], *, what: str | None = None):
        names = sorted(set(known))
        guess = nearest(str(spec), names)
        message = what or f"No exercise named {shown(spec, newlines=False)!r}."
        if guess is not None:
            message += f" Did you mean {guess}?"
        super().__init__(message, hint=f"Known exercises: {', '.join(names) or '(none)'}. `grader list` shows them.")
        self.suggestion = guess
