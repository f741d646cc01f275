"""What a long command is doing, as plain data: how many of how many are done, and what is running since when.

Commands that grade many files (batch, regrade, validate) feed a :class:`Work` from their worker
threads; the CLI shows it as a bar on a terminal, or as a plain line at least every 10 s where
output goes to a file or a pipe (``grader.cli.heartbeat``). The clock is a parameter, so the
lines are tested without waiting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from grader.untrusted import shown


def clock_text(seconds: float) -> str:
    """``2:31``: minutes and seconds."""
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


class Work:
    """``total`` things to do (0: not known yet), those ``done``, and the ones in flight with their start times.
    Labels come from outside (candidate and exercise names) and are escaped when shown."""

    def __init__(self, what: str = "grading", total: int = 0, clock: Callable[[], float] = time.monotonic):
        self.what, self.total, self.done, self.clock = what, total, 0, clock
        self.since: dict[str, float] = {}
        self.started = clock()
        self.lock = threading.Lock()

    def plan(self, total: int) -> None:
        with self.lock:
            self.total = total

    def reached(self, done: int) -> None:
        """``done`` things are done (a build's step number says so itself)."""
        with self.lock:
            self.done = done

    def start(self, label: str) -> None:
        with self.lock:
            self.since[label] = self.clock()

    def finish(self, label: str) -> None:
        """``label`` ended and counts as done."""
        with self.lock:
            self.since.pop(label, None)
            self.done += 1

    def drop(self, label: str) -> None:
        """``label`` stopped without being done (it will be tried again, or the run was stopped)."""
        with self.lock:
            self.since.pop(label, None)

    def clear(self) -> None:
        with self.lock:
            self.since.clear()

    def in_flight(self) -> list[tuple[str, float]]:
        """(label, seconds so far), the longest-running first."""
        now = self.clock()
        with self.lock:
            items = sorted(self.since.items(), key=lambda kv: (kv[1], kv[0]))
        return [(label, now - t) for label, t in items]

    def lines(self, limit: int = 6) -> list[str]:
        """``"  ann/attention  2:31"`` per item in flight, longest first; ``"  +3 more"`` beyond ``limit``."""
        items = self.in_flight()
        out = [f"  {shown(label, newlines=False)}  {clock_text(seconds)}" for label, seconds in items[:limit]]
        if len(items) > limit:
            out.append(f"  +{len(items) - limit} more")
        return out

    def line(self) -> str:
        """One plain line: ``grading: 12 of 40 done · 2 running, the slowest ann/attention 1:12 · 2:31 so far``."""
        items = self.in_flight()
        with self.lock:
            done, total = self.done, self.total
        parts = [f"{self.what}: {done} of {total} done" if total else f"{self.what}: {done} done"]
        if items:
            label, seconds = items[0]
            parts.append(f"{len(items)} running, the slowest {shown(label, newlines=False)} {clock_text(seconds)}")
        parts.append(f"{clock_text(self.clock() - self.started)} so far")
        return " · ".join(parts)
