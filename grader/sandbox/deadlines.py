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
"""

from __future__ import annotations

from dataclasses import dataclass

#: How much slower than the slowest answered call a later call may be, once a call has timed out.
SLOWEST_FACTOR = 5.0


@dataclass(frozen=True)
class Deadline:
    """The seconds one call may take, and the exercise's full deadline it was derived from."""

    seconds: float
    full_s: float

    @property
    def shortened(self) -> bool:
        return self.seconds < self.full_s

    def describe(self, during: str = "") -> str:
        """``its 20 s deadline``, or ``its 1 s deadline (shortened from 20 s after an earlier call timed out)``.

        Both start with "its": the sandbox client writes "the call to 'x' ran past " before them.
        ``during`` (" while importing the submission") goes right after the word deadline.
        """
        said = f"its {_seconds(self.seconds)} deadline{during}"
        if self.shortened:
            said += f" (shortened from {_seconds(self.full_s)} after an earlier call timed out)"
        return said


class CallDeadlines:
    """What the next call of one grading may take. The sandbox client tells it how each call ended.

    Not locked: the client asks and reports under its own call lock.
    """

    def __init__(self, *, full_s: float, after_timeout_s: float):
        if full_s <= 0 or after_timeout_s <= 0:
            raise ValueError(f"call deadlines must be positive, got full_s={full_s!r}, "
                             f"after_timeout_s={after_timeout_s!r}")
        self.full_s = full_s
        self.after_timeout_s = after_timeout_s
        self.slowest_answer_s = 0.0
        self.timeouts = 0

    def next(self, full_s: float | None = None) -> Deadline:
        """The deadline of the next call; ``full_s`` replaces the exercise's for this call only."""
        full = full_s or self.full_s
        if not self.timeouts:
            return Deadline(full, full)
        return Deadline(min(full, max(self.after_timeout_s, SLOWEST_FACTOR * self.slowest_answer_s)), full)

    def answered(self, seconds: float) -> None:
        """A call came back with a result (a value or the candidate's exception) after ``seconds``."""
        self.slowest_answer_s = max(self.slowest_answer_s, seconds)

    def timed_out(self) -> None:
        """A call ran past its deadline: the calls after it get the shortened one."""
        self.timeouts += 1


def _seconds(s: float) -> str:
    """``20 s``, ``1.5 s``, ``0.25 s``: what a reader needs, without float noise."""
    return f"{s:.2f}".rstrip("0").rstrip(".") + " s"
