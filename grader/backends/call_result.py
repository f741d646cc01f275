"""What one call into the sandbox came to: a value (like pytest's ``CallInfo``), read from a reply trusting nothing.

A call ends with the probe's data, the candidate's exception (a validated
:class:`~grader.wire.error_record.ErrorRecord`), or a :class:`Failure` saying why there is no
answer at all; the reply it is read from is the sandbox's, so every field is checked for
its shape before it is believed (:func:`result_from_reply`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from grader.backends.deadlines import Clock
from grader.wire.error_record import ErrorRecord, MalformedErrorRecord, read_error_record


class Failure(str, Enum):
    TIMEOUT = "timeout"  # the call ran past its deadline (CPU budget or wall-clock ceiling); the worker was killed
    CRASH = "crash"  # the worker died (os._exit, segfault, memory limit)
    PROTOCOL = "protocol"  # the channel carried something that is not a valid frame
    TOO_LARGE = "too_large"  # a reply announced more bytes than the exercise's cap; refused unread


@dataclass
class CallResult:
    probe: str
    value: Any = None
    error: ErrorRecord | None = None  # the candidate's exception, validated
    failure: Failure | None = None
    failure_message: str = ""
    #: The failure's particulars without its subject, for whoever words it again: a timeout's deadline and clock
    #: figures ("its 20 s deadline: it used ..."), a crash's end ("exit code 137"); "" for the others.
    failure_cause: str = ""
    output: str = ""
    output_dropped: int = 0
    #: Forbidden APIs the candidate's code called, as indices into the list the judge sent the worker
    #: (``--forbid``): the judge names them from the exercise's own list, never from the sandbox's words.
    forbidden: list[int] = field(default_factory=list)
    duration_s: float = 0.0
    received_bytes: int = 0  # the size of the reply frames, counted toward a check's result budget
    during_import: bool = False  # the worker said "importing" and never "imported": the file does not import
    deadline_s: float = 0.0  # the deadline this call ran under (shortened after an earlier timeout); 0: it did not run
    timed_out_by: Clock | None = None  # a timeout: which clock ended it (CPU budget, wall-clock ceiling, hard limit)

    @property
    def ok(self) -> bool:
        return self.error is None and self.failure is None


def _as_text(value, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


#: More forbidden APIs than any exercise lists (``grader.wire.selfreport.MAX_ITEMS``).
_MAX_API_INDEX = 200


def _api_indices(value) -> list[int] | None:
    """The reply's ``forbidden``: a list of distinct API indices, or None when it is anything else."""
    if not isinstance(value, list) or len(value) > _MAX_API_INDEX:
        return None
    if not all(type(i) is int and 0 <= i < _MAX_API_INDEX for i in value):
        return None
    return sorted(set(value))


def result_from_reply(probe: str, reply: dict, elapsed: float) -> CallResult:
    """Build a CallResult from a worker reply, trusting nothing about its shape."""
    forbidden = _api_indices(reply.get("forbidden", []))
    dropped = reply.get("output_dropped")
    common = dict(output=_as_text(reply.get("output"), 20000),
                  output_dropped=dropped if type(dropped) is int and dropped >= 0 else 0,
                  forbidden=forbidden or [], duration_s=elapsed)
    if forbidden is None:  # not what the worker sends: the call has no trustworthy answer
        return CallResult(probe, failure=Failure.PROTOCOL, failure_message=(
            f"the sandbox's report of forbidden API calls during a call is malformed"), **common)
    if reply.get("ok") is True:
        return CallResult(probe, value=reply.get("value"), **common)
    if reply.get("error") is None:
        return CallResult(probe, failure=Failure.PROTOCOL, failure_message="a failed result carried no error",
                          **common)
    try:
        error = read_error_record(reply["error"])
    except MalformedErrorRecord as e:
        return CallResult(probe, failure=Failure.PROTOCOL, failure_message=f"{e} (from a call)",
                          **common)
    return CallResult(probe, error=error, **common)
