"""A probe's answer, a dict, before a check compares anything in it.

Before a check reads a key of a probe's answer, two things must hold, once for every exercise: the
answer is a dict (anything else means the probe and the check disagree), checked by ``call``; and the
probe did not report a value of the wrong kind returned by the candidate's function (under
``"returned"``, at any depth), checked by ``expect_returned``. Forbidden APIs are not a probe's to
report: they are absent from the sandbox (``grader.sandbox.removal``), and the judge names them.
"""

from __future__ import annotations

from grader.judge.replies import ReplyMismatch


def call(sandbox, probe: str, /, *args, **kwargs) -> dict:
    """``sandbox.call(probe, *args, **kwargs)`` for a probe that answers with a dict; that dict.

    Fails the check when the answer is not a dict.
    """
    answer = sandbox.call(probe, *args, **kwargs)
    if not isinstance(answer, dict):
        raise ReplyMismatch(f"a probe returned {type(answer).__name__}, expected a dict", probe=probe)
    return answer


def expect_returned(report: dict, *, function: str, returns: str) -> dict:
    """``report`` (a probe's account of one call of ``function``), unless it says the call returned
    something other than ``returns``: then the check fails, naming both."""
    if "returned" in report:
        raise AssertionError(f"{function} must return {returns}; it returned {report['returned']}")
    return report
