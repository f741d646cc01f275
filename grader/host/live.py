"""The judge's events as they happen, for whoever shows progress (``grader submit`` on a terminal).

The judge writes one JSON line per event (``grader.judge.plugin``); ``runner``
reads the whole file back when the judge ends, and that is what scores. This
module reads the same file while the judge runs, line by complete line, through
the same parse (``grader.wire.events``). Nothing here decides a score: a line cut
off or garbled is skipped, and the final read stands.
"""

from __future__ import annotations

from pathlib import Path

from grader.wire.events import JudgeEvent, MalformedEvent, parse_event


def _progress(line: str) -> JudgeEvent | None:
    try:
        return parse_event(line)
    except MalformedEvent:
        return None  # the runner's final read says so; progress just skips it


class EventTail:
    """The events file read from where the last call stopped; a line still being written waits for the next call."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = 0

    def new_events(self) -> list[JudgeEvent]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return []
        complete = data[:data.rfind(b"\n") + 1]
        self.offset += len(complete)
        events = (_progress(line) for line in complete.decode("utf-8", "replace").splitlines())
        return [e for e in events if e is not None]
