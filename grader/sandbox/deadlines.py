"""The deadline of the sandbox's next call: the exercise's full one, until a call has timed out.

A file that loops forever made every check wait out the whole call deadline
(20 s) and restart the sandbox: about 290 s for one attention file. Once a call
has timed out, the file has shown it can hang, so later calls of the same grading
get ``max(call_timeout_after_timeout_s, SLOWEST_FACTOR x the slowest answered
call so far)``, never more than the full deadline. The slowest answered call is
the file's own measure of what its calls need (the import of the submission
included, since a fresh worker's first call imports it), so a file that is slow
everywhere keeps a deadline its calls fit in.

The first timeout of a grading always gets the full deadline, and a grading where
no call times out never sees a shorter one: honest gradings are timed as before.
Each timeout is still reported on its own check, naming the deadline that applied
(:meth:`Deadline.describe`).

A deadline is a promise about the candidate's code, not about the machine. On a busy
machine (a batch sharing its cores, CI beside other work) the same honest call takes
several times longer, and a first call that overran 20 s made every later call of an
honest file time out under the shortened deadline: a zero from a busy machine. So
every deadline is stretched by how oversubscribed the machine is when the call starts
(:func:`machine_load_factor`: the 1-minute load average per core, 1 on an idle machine,
at most :data:`MAX_STRETCH`), and the message says so. An idle machine's deadlines are
exactly the exercise's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

#: How much slower than the slowest answered call a later call may be, once a call has timed out.
SLOWEST_FACTOR = 5.0

#: The most a busy machine stretches a deadline: beyond it, a grading is better slow to fail than endless.
MAX_STRETCH = 8.0


def machine_load_factor() -> float:
    """Runnable tasks per core now (the 1-minute load average over the cores this process may use), in [1, MAX_STRETCH].

    The load average counts the host's tasks, the sandboxes' included, which is what competes with a call
    for CPU. A candidate who loads the machine only stretches their own grading's deadlines, up to the cap.
    """
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):  # not available: treat the machine as idle
        return 1.0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(MAX_STRETCH, max(1.0, load / max(1, cores)))


@dataclass(frozen=True)
class Deadline:
    """The seconds one call may take, the full deadline it was derived from, and the busy machine's stretch.

    ``seconds`` and ``full_s`` are what applies (stretched); the exercise's own figures are them over ``stretch``.
    """

    seconds: float
    full_s: float
    stretch: float = 1.0

    @property
    def shortened(self) -> bool:
        return self.seconds < self.full_s

    def describe(self, during: str = "") -> str:
        """``its 20 s deadline``, or ``its 1 s deadline (shortened from 20 s after an earlier call timed out)``,
        then, on a busy machine, ``, stretched to 8.5 s (the machine was busy: 4.2 tasks per core)``.

        All start with "its": the sandbox client writes "the call to 'x' ran past " before them.
        ``during`` (" while importing the submission") goes right after the word deadline.
        """
        said = f"its {_seconds(self.seconds / self.stretch)} deadline{during}"
        if self.shortened:
            said += f" (shortened from {_seconds(self.full_s / self.stretch)} after an earlier call timed out)"
        if self.stretch > 1:
            said += (f", stretched to {_seconds(self.seconds)} "
                     f"(the machine was busy: {self.stretch:.1f} tasks per core)")
        return said


class CallDeadlines:
    """What the next call of one grading may take. The sandbox client tells it how each call ended.

    Not locked: the client asks and reports under its own call lock.
    """

    def __init__(self, *, full_s: float, after_timeout_s: float, load: Callable[[], float] = machine_load_factor):
        if full_s <= 0 or after_timeout_s <= 0:
            raise ValueError(f"call deadlines must be positive, got full_s={full_s!r}, "
                             f"after_timeout_s={after_timeout_s!r}")
        self.full_s = full_s
        self.after_timeout_s = after_timeout_s
        self._load = load
        self.slowest_answer_s = 0.0
        self.timeouts = 0

    def next(self, full_s: float | None = None) -> Deadline:
        """The deadline of the next call; ``full_s`` replaces the exercise's for this call only.

        The slowest answered call is wall time already measured on this machine, so it is not stretched again.
        """
        stretch = min(MAX_STRETCH, max(1.0, self._load()))
        full = (full_s or self.full_s) * stretch
        if not self.timeouts:
            return Deadline(full, full, stretch)
        shortened = max(self.after_timeout_s * stretch, SLOWEST_FACTOR * self.slowest_answer_s)
        return Deadline(min(full, shortened), full, stretch)

    def answered(self, seconds: float) -> None:
        """A call came back with a result (a value or the candidate's exception) after ``seconds``."""
        self.slowest_answer_s = max(self.slowest_answer_s, seconds)

    def timed_out(self) -> None:
        """A call ran past its deadline: the calls after it get the shortened one."""
        self.timeouts += 1


def _seconds(s: float) -> str:
    """``20 s``, ``1.5 s``, ``0.25 s``: what a reader needs, without float noise."""
    return f"{s:.2f}".rstrip("0").rstrip(".") + " s"
