"""Tests marked ``exclusive`` run alone, even when pytest-xdist runs the suite on several workers.

A few tests reason about the whole Docker engine: one plants a container whose
owner is dead and counts what ``grader submit``'s reaper removes, but every
grading's reaper removes such containers, so another worker's grading at the same
moment would change the count. Every test therefore holds a shared lock from its
setup to its teardown, and an ``exclusive`` test holds it alone. A turnstile in
front keeps a waiting exclusive test from being starved by a stream of shared
ones. Without xdist nothing runs concurrently and no lock is taken. The hook that
takes it is in conftest.py.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

@contextlib.contextmanager
def _flock(path: Path, mode: int):
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)  # closing releases the lock


class EngineLock:
    """A readers-writer lock over two files that every worker of one test run opens."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.turnstile, self.room = folder / "turnstile", folder / "room"

    @contextlib.contextmanager
    def shared(self):
        with _flock(self.turnstile, fcntl.LOCK_EX):
            pass  # blocks while an exclusive test waits for the room or is in it
        with _flock(self.room, fcntl.LOCK_SH):
            yield

    @contextlib.contextmanager
    def exclusive(self):
        with _flock(self.turnstile, fcntl.LOCK_EX), _flock(self.room, fcntl.LOCK_EX):
            yield


def held_for(item):
    """The lock ``item`` holds from setup to teardown on an xdist worker: alone if marked ``exclusive``.

    The lock files live beside the workers' own temp folders (xdist gives each worker
    ``<run's basetemp>/popen-gwN``), so every worker of one run shares them and pytest
    prunes them with the run's other temp folders.
    """
    lock = EngineLock(Path(item.config.option.basetemp).parent / "engine-lock")
    return lock.exclusive() if item.get_closest_marker("exclusive") else lock.shared()
