"""Process-tree facts from /proc, for tests that kill the grader and check nothing it started survives."""

from __future__ import annotations

import signal
import time
from pathlib import Path


def sigint_as_a_terminal_gives_it() -> None:
    """``preexec_fn`` for a child that a test stops with Ctrl-C: SIGINT back to its default.

    pytest-xdist's workers ignore SIGINT, and an ignored signal stays ignored across exec: Python then
    installs no KeyboardInterrupt handler, and the "Ctrl-C" of a test under xdist did nothing at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _ppid_and_state(pid: int) -> tuple[int, str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
    return int(fields[1]), fields[0]


def descendants(root: int) -> set[int]:
    """Every live process below ``root`` (children, grandchildren, ...)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (info := _ppid_and_state(int(entry.name))):
            parents[int(entry.name)] = info[0]
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    """Those of ``pids`` still running (a zombie, already dead but not yet reaped, does not count)."""
    return {pid for pid in pids if (info := _ppid_and_state(pid)) and info[1] != "Z"}


def still_alive_after(pids: set[int], seconds: float = 10) -> set[int]:
    """Wait up to ``seconds`` for ``pids`` to end (a process dies a moment after its parent); return the rest."""
    deadline = time.monotonic() + seconds
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    return alive(pids)
