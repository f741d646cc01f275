"""How a check was lost, as data a grading can match: what the check said, its reported values as numbers.

Two files that lose the same checks may make different mistakes; two that make the same mistake are
graded on the same inputs (same seed, same examples, so hypothesis shrinks to the same case) and their
checks say the same thing with the same values. A lost check's evidence is, per lost case, what ended
it in the judge's words: a wrong answer's whole assertion (the values it reports), the exception class and
message of an error (never the line, which is the file's own), "timeout", "forbidden". Matching
compares the words exactly and the numbers within a relative 1e-3, so float noise in a reported value
never separates one mistake from itself, while another value of the same check does.
"""

from __future__ import annotations

import math
import re
from typing import Sequence

from grader.reports.model import CheckResult, Status, split_check_id

#: Numbers in a message: compared with a tolerance, the rest of the text exactly.
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
#: An absolute path (a temporary folder's name changes every run): its last part is kept.
_PATH = re.compile(r"(?:/[^\s/,;:'\"()\[\]`]+)+/([^\s/,;:'\"()\[\]`]+)")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
#: Where the judge says a candidate's exception was raised (``grader.judge.outcomes.raised_where``).
_RAISED = re.compile(r"^your code raised \S+?(?: at line \d+(?: \(`[^`]*`\))?)?(?=:|$)")
#: Relative and absolute tolerance on a reported number.
RTOL, ATOL = 1e-3, 1e-8
#: Evidence kept per case, in characters (a failed check's whole assertion is capped at 1500 where it is made).
MAX_TEXT = 1500


def case_evidence(check: CheckResult) -> str:
    """How one lost case ended, normalised: ``[case] what``; the case's parameters first when it is parametrized."""
    _, params = split_check_id(check.id)
    if check.penalty == "forbidden":
        what = "forbidden"
    elif check.status is Status.TIMEOUT:
        what = "timeout"
    elif check.status is Status.ERROR:
        said = _RAISED.match(check.message)  # the judge's own opening, with the line: the file's, not the mistake's
        what = f"raised {check.raised}{check.message[said.end():] if said else ''}" if check.raised else "crashed"
    else:
        what = (check.said or check.message).strip()
    what = " ".join(_ADDRESS.sub("0x", _PATH.sub(r"\1", what)).split())[:MAX_TEXT]
    return f"[{params}] {what}" if params is not None else what


def evidence_of(cases: Sequence[CheckResult]) -> list[str]:
    """The evidence of one check function: each of its lost cases, in the report's order."""
    return [case_evidence(c) for c in cases if c.lost_points]


def same_evidence(a: Sequence[str] | None, b: Sequence[str] | None) -> bool:
    """Both lost the same cases saying the same words, every reported number within tolerance; nothing recorded
    on either side is no evidence, never a match."""
    if a is None or b is None or len(a) != len(b):
        return False
    return all(_same_text(x, y) for x, y in zip(a, b))


def _same_text(a: str, b: str) -> bool:
    if _NUMBER.split(a) != _NUMBER.split(b):
        return False
    return all(_close(float(x), float(y)) for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)))


def _close(x: float, y: float) -> bool:
    return x == y or (math.isfinite(x) and math.isfinite(y) and abs(x - y) <= ATOL + RTOL * max(abs(x), abs(y)))
