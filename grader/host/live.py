"""The judge's events as they happen, for whoever shows progress (``grader submit`` on a terminal).

The judge writes one JSON line per event (``grader.judge.plugin``); ``runner``
reads the whole file back when the judge ends, and that is what scores. This
module reads the same file while the judge runs, line by complete line, and
turns what a progress display needs into typed events. Nothing here decides a
score: a line cut off or garbled is skipped, and the final read stands.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from grader.wire.spec import CheckSpec
from grader.reports.model import Status


@dataclass(frozen=True)
class Collected:
    """Every check of the grading, in the author's order, known before any candidate code runs."""

    checks: tuple[CheckSpec, ...]


@dataclass(frozen=True)
class Started:
    id: str


@dataclass(frozen=True)
class Finished:
    id: str
    status: Status


JudgeEvent = Collected | Started | Finished


def parse(line: str) -> JudgeEvent | None:
    """One event line as a typed event; ``None`` for kinds a progress display ignores or a bad line."""
    try:
        event = json.loads(line)
        kind = event.get("event")
        if kind == "collected":
            return Collected(tuple(CheckSpec.model_validate(c) for c in event["checks"]))
        if kind == "started":
            return Started(event["id"])
        if kind == "result":
            return Finished(event["id"], Status(event["status"]))
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


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
        events = (parse(line) for line in complete.decode("utf-8", "replace").splitlines())
        return [e for e in events if e is not None]
