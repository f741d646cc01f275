"""Pull hypothesis' shrunk counterexample out of a failed check, for the scorecard.

Hypothesis attaches it to the final exception as a note ("Failing test case:
test_x(shape=(1, 2), seed=0)", spelled "Falsifying example:" before 6.1xx, or
"Failing explicit example:" for an ``@example`` the author wrote); the sandbox
fixture appears there too and is dropped, since it is the same for every example.
"""

from __future__ import annotations

import re

_PREFIXES = ("Failing test case", "Falsifying example", "Failing explicit example")
_FIXTURE_ARG = re.compile(r"^\s*sandbox=.*,\s*$\n?", re.MULTILINE)


def extract(exc: BaseException | None) -> str | None:
    """The shrunk example of ``exc`` (or of the first of an exception group), if any."""
    seen = 0
    while exc is not None and seen < 10:
        seen += 1
        for note in getattr(exc, "__notes__", []) or []:
            if note.startswith(_PREFIXES):
                return _FIXTURE_ARG.sub("", note).strip()
        exc = exc.exceptions[0] if isinstance(exc, BaseExceptionGroup) and exc.exceptions else None
    return None
