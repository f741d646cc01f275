"""A probe's answer, a dict, before a check compares anything in it.

Most probes run one piece of the candidate's code and answer with a dict that
describes what happened (``{"out": ..., "weights": ...}``). Before a check reads a
key, two things must hold, and every exercise used to write them again: the answer
is a dict at all (anything else means the probe and the check disagree), and the
probe did not report a value of the wrong kind returned by the candidate's function,
described under ``"returned"``. ``call`` checks the first; ``expect_returned`` the
second, at whatever depth the probe put it (one report per rank, per batch).

Forbidden APIs are not a probe's to report: they are absent from the sandbox
(``grader.sandbox.removal``), a call of one raises there, and the judge names it
from the exercise's own list.
"""

from __future__ import annotations


def call(sandbox, probe: str, /, *args, **kwargs) -> dict:
    """``sandbox.call(probe, *args, **kwargs)`` for a probe that answers with a dict; that dict.

    Fails the check when the answer is not a dict.
    """
    answer = sandbox.call(probe, *args, **kwargs)
    if not isinstance(answer, dict):
        raise AssertionError(f"probe {probe!r} returned {type(answer).__name__}, expected a dict")
    return answer


def expect_returned(report: dict, *, function: str, returns: str) -> dict:
    """``report`` (a probe's account of one call of ``function``), unless it says the call returned
    something other than ``returns``: then the check fails, naming both."""
    if "returned" in report:
        raise AssertionError(f"{function} must return {returns}; it returned {report['returned']}")
    return report
