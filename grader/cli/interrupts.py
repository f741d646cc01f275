"""Ctrl-C, wherever it lands, ends a command as interrupted: exit 130 and one line (docs/decisions/ctrl-c-exit-status.md)."""

from __future__ import annotations

import _thread
import contextlib
import sys
import threading
import time


def forget_handled_interrupt() -> None:
    """Call once a KeyboardInterrupt is handled, before exiting with 130.

    CPython marks a KeyboardInterrupt that leaves a *string* ``exec``/``eval`` (``dataclasses`` and
    ``namedtuple`` build their methods that way, on import) as unhandled, even when a caller catches it;
    under ``python -m grader`` the interpreter then ends the process by SIGINT (-2) instead of the exit
    status asked for. The mark is reset at the start of every string exec: one trivial exec forgets it.
    docs/decisions/ctrl-c-exit-status.md has the evidence."""
    exec("pass", {})


@contextlib.contextmanager
def no_interrupt_lost():
    """A Ctrl-C that lands where Python cannot raise (a weakref callback, a ``__del__``: "Exception ignored") is
    delivered again to the main thread a moment later, past the place that dropped it, so the command stops
    instead of running to its end; and if the command ends first, it still ends as interrupted."""
    previous = sys.unraisablehook
    lost = threading.Event()

    def again() -> None:
        time.sleep(0.05)  # the main thread leaves the hook first (it holds the GIL for microseconds)
        _thread.interrupt_main()

    def hook(unraisable):
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            lost.set()
            _thread.start_new_thread(again, ())  # threading's start() would wait here, and be interrupted here
        else:
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
        if lost.is_set():
            raise KeyboardInterrupt
    finally:
        sys.unraisablehook = previous
