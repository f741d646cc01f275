"""A traceback as data: the frames the sandbox kept and the exception's own lines, formatted by the judge.

The worker sends its frames as fields (file, line, function, source line, columns); it belongs to the
candidate once their module is imported, so the record is untrusted and bounded (``grader.wire.error_record``
validates it once). Which frames are the candidate's own is decided here, by the sandbox's fixed layout
(``grader.backends.staging``: the submission sits in a folder named ``submission``), from each frame's
``file`` field; the panel reads every kept frame (the probes' too), a candidate only their own.
See docs/decisions/privacy-by-fields.md.
"""

from __future__ import annotations

import traceback
from pathlib import PurePosixPath
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from grader.untrusted import without_ansi

#: The folder the staged submission sits in, inside every sandbox (docker and local).
SUBMISSION_FOLDER = "submission"
#: Frames a record may hold: the worker keeps the innermost ones (a deep recursion keeps its end).
MAX_FRAMES = 100
#: The most of a traceback's text kept: its end, where the exception is.
TRACEBACK_CAP = 6000
_HEADER = "Traceback (most recent call last):\n"
_Position = Annotated[int, Field(ge=0, le=10_000_000)]


class Frame(BaseModel):
    """One frame of a traceback, as the sandbox's Python extracted it."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    file: Annotated[str, StringConstraints(max_length=1000)] = Field(description="the frame's file, as a path")
    line: _Position
    function: Annotated[str, StringConstraints(max_length=300)]
    source: Annotated[str, StringConstraints(max_length=2000)] = Field(
        default="", description="the file's line as read, unstripped ('' when unknown): what the text quotes")
    end_line: _Position | None = None
    column: _Position | None = Field(default=None, description="where the failing expression starts (for carets)")
    end_column: _Position | None = None


class Trace(BaseModel):
    """The frames the worker kept (the submission's and the probes') and the exception's own lines."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    frames: list[Frame] = Field(default_factory=list, max_length=MAX_FRAMES,
                                description="outermost first, the innermost last")
    exception: Annotated[str, StringConstraints(max_length=10_000)] = Field(
        default="", description="the exception-only lines (traceback.format_exception_only)")


def is_candidate_frame(frame: Frame) -> bool:
    """A frame of the submission: its file sits in the sandbox's submission folder."""
    return PurePosixPath(frame.file.replace("\\", "/")).parent.name == SUBMISSION_FOLDER


def _summary(frame: Frame, file: str) -> traceback.FrameSummary:
    # ``line`` is never empty: a FrameSummary without one reads the judge's own file of that name (a blank line
    # is printed as none, like an unknown one).
    return traceback.FrameSummary(file, frame.line, frame.function, lookup_line=False, line=frame.source or " ",
                                  end_lineno=frame.end_line, colno=frame.column, end_colno=frame.end_column)


def format_trace(trace: Trace, *, candidate: bool) -> str:
    """``trace`` as Python prints a traceback: every kept frame for the panel; for a candidate, only the
    submission's frames, named by file name. The exception's lines close it; escape codes are dropped."""
    frames = [f for f in trace.frames if is_candidate_frame(f)] if candidate else trace.frames
    summaries = [_summary(f, PurePosixPath(f.file.replace("\\", "/")).name if candidate else f.file) for f in frames]
    text = (_HEADER if summaries else "") + "".join(traceback.StackSummary.from_list(summaries).format())
    text = without_ansi((text + trace.exception)[-TRACEBACK_CAP:])
    return text.rstrip("\n") if candidate else text  # a candidate's ends on its last line, as it always has


def last_candidate_line(trace: Trace | None) -> int | None:
    """The line of the innermost submission frame, if any (where the error was raised)."""
    own = [f.line for f in (trace.frames if trace is not None else []) if is_candidate_frame(f)]
    return own[-1] if own else None
