"""A traceback as a candidate should read it: their own frames and the exception, not the grader's.

The worker cuts a traceback to the frames of the submission and of the exercise's
probes, but the worker belongs to the candidate once their module is imported, so
what it sends is untrusted text: the judge cuts it again here, by the sandbox's
fixed layout (``grader.backends.staging``: the submission lives in a folder named
``submission``). Probe frames (``/sandbox/probes/probes.py, line 113, in
mha_build``) are the grader's code; the panel keeps them in the stored report.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

_FRAME = re.compile(r'^  File "(?P<path>[^"\n]*)", line (?P<line>\d+)(?P<rest>, in .*)$')
_HEADER = "Traceback (most recent call last):"
#: The folder the staged submission sits in, inside every sandbox (docker and local).
SUBMISSION_FOLDER = "submission"


def is_candidate_file(path: str) -> bool:
    """A frame of the submission: in the sandbox's submission folder, or already shown by its bare
    file name (this module's own output, so cutting twice changes nothing)."""
    parent = PurePosixPath(path.replace("\\", "/")).parent
    return parent.name == SUBMISSION_FOLDER or str(parent) == "."


def candidate_traceback(text: str) -> str:
    """``text`` (a formatted traceback) with only the submission's frames, named by file name, and the
    exception lines after them. Text that is no traceback comes back unchanged."""
    lines = text.splitlines()
    if not any(_FRAME.match(line) for line in lines):
        return text
    kept: list[str] = []
    keep_frame: bool | None = None  # None: not inside a frame (header or exception lines)
    for line in lines:
        frame = _FRAME.match(line)
        if frame:
            keep_frame = is_candidate_file(frame["path"])
            if keep_frame:
                name = PurePosixPath(frame["path"].replace("\\", "/")).name
                kept.append(f'  File "{name}", line {frame["line"]}{frame["rest"]}')
        elif keep_frame is not None and line.startswith("    "):
            if keep_frame:
                kept.append(line)  # the frame's source line and carets
        elif line == _HEADER:
            keep_frame = None
        else:
            keep_frame = None
            kept.append(line)
    has_frames = any(_FRAME.match(line) for line in kept)
    return "\n".join(([_HEADER] if has_frames else []) + kept)


def last_candidate_line(text: str) -> int | None:
    """The line of the innermost submission frame of a traceback, if any (where the error was raised)."""
    found = None
    for line in text.splitlines():
        frame = _FRAME.match(line)
        if frame and is_candidate_file(frame["path"]):
            found = int(frame["line"])
    return found
