"""The candidate's exception as the sandbox reports it: one typed record, validated on the judge's side.

The worker (and probes that catch an exception to report it) turns an exception into plain data: type
name, its classes' names, whether it is a builtin, message, traceback frames. It comes from the sandbox,
where the candidate can forge anything, so the judge reads it through :func:`read_error_record`: a
record of the wrong shape raises :class:`MalformedErrorRecord`, a protocol violation that fails the
check with a message, never a ``KeyError`` or ``TypeError``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from grader.errors import describe_invalid
from grader.reports.tracebacks import Trace

#: The worker sends at most 2000 characters of message; a check may add context (ddp_step names the rank).
#: Beyond this, a record is not an honest worker's (its traceback's bounds are ``Trace``'s).
MAX_MESSAGE = 10_000
MAX_QUALNAMES = 64  # the worker sends 20 classes of the exception's MRO
_Name = Annotated[str, StringConstraints(max_length=300)]


class MalformedErrorRecord(Exception):
    """What the sandbox reported as the candidate's exception is not an error record."""


class ErrorRecord(BaseModel):
    """The candidate's exception, as data: what ``CandidateError`` and its failure message are made from."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    type: Annotated[str, StringConstraints(min_length=1, max_length=300)] = Field(
        description="the exception's class name")
    qualnames: list[_Name] = Field(max_length=MAX_QUALNAMES,
                                   description="the class names of its MRO, itself first: what `is_a` matches")
    builtin: bool = Field(description="a builtin exception class (ValueError), not one the candidate defined")
    message: Annotated[str, StringConstraints(max_length=MAX_MESSAGE)]
    trace: Trace = Field(default_factory=Trace,
                         description="the frames the worker kept (the submission's and the probes') and the "
                                     "exception's own lines: data the judge formats; none when a probe "
                                     "reported the exception itself")


def read_error_record(data: object) -> ErrorRecord:
    """``data`` (from the sandbox) as an :class:`ErrorRecord`, or :class:`MalformedErrorRecord` saying what is wrong."""
    if isinstance(data, ErrorRecord):
        return data
    if not isinstance(data, dict):
        raise MalformedErrorRecord(f"the sandbox reported an error that is not a record but a {type(data).__name__}")
    try:
        return ErrorRecord.model_validate(data)
    except ValidationError as e:
        raise MalformedErrorRecord(describe_invalid("the sandbox reported a malformed error record:", e,
                                                    show_input=False, limit=3)[:1000]) from None
