"""A watchdog on resident memory: the local sandbox's memory limit when the worker has a GPU.

CUDA cannot start under the address-space limit (RLIMIT_AS) the local sandbox uses otherwise, and what
``[limits] memory_mb`` means, as in Docker's cgroup, is resident memory. So a judge thread sums the
resident memory of the worker and every process it started, every :data:`INTERVAL_S`, confirms with
their proportional share (PSS), and kills the group past the limit. It cannot stop an allocation
between two looks: the limit makes a runaway grading die with a reason, it contains no attacker.
Linux only (``/proc``); elsewhere :func:`unavailable` says why, and the report names the missing limit.
See docs/decisions/gpu-memory-watchdog.md.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

#: Seconds between two looks at the worker's memory.
INTERVAL_S = 0.1

_PROC = Path("/proc")


def unavailable() -> str | None:
    """Why no watchdog can run on this platform (None: it can)."""
    if not (_PROC / "self" / "statm").is_file():
        return "this platform has no /proc to read a process's resident memory from"
    return None


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it, as /proc's ``children`` files list them (threads included)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            tasks = list((_PROC / str(p) / "task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
    return out


def _statm_rss(pid: int) -> int:
    try:
        return int((_PROC / str(pid) / "statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0  # gone since it was listed


def _pss(pid: int) -> int:
    try:
        with open(_PROC / str(pid) / "smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return _statm_rss(pid)


def resident_bytes(pid: int, *, limit: int | None = None) -> int:
    """The resident memory of ``pid`` and its descendants. A sum of RSS; when that passes ``limit``, their
    PSS instead (shared pages counted once), which costs about a millisecond per process."""
    pids = descendants(pid)
    rss = sum(_statm_rss(p) for p in pids)
    if limit is None or rss <= limit or len(pids) == 1:
        return rss
    return sum(_pss(p) for p in pids)


class MemoryWatch:
    """Kill ``pid``'s process group (``kill``) once its resident memory passes ``limit_bytes``."""

    def __init__(self, pid: int, limit_bytes: int, kill: Callable[[], None], *, interval: float = INTERVAL_S,
                 measure: Callable[..., int] = resident_bytes):
        self.pid, self.limit, self._kill, self._interval, self._measure = pid, limit_bytes, kill, interval, measure
        self.tripped: int | None = None  # what it measured when it killed
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="local-sandbox-memory-watch", daemon=True)

    def start(self) -> MemoryWatch:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            used = self._measure(self.pid, limit=self.limit)
            if used > self.limit:
                self.tripped = used
                self._kill()
                return

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)

    def reason(self) -> str | None:
        """Why the worker died, when this watch killed it."""
        if self.tripped is None:
            return None
        mb = 1024 * 1024
        return (f"killed for exceeding its memory limit: resident memory {self.tripped // mb} MB passed "
                f"{self.limit // mb} MB (the local sandbox's memory watchdog)")
