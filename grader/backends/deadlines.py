"""How long one call of the sandbox may take, measured on the sandbox's own clocks.

A deadline is a promise about the candidate's code, not about the machine, so it is charged to the
sandbox: a CPU budget read from its cgroup, a wall-clock ceiling for a call that hangs without
spending CPU (less the time a busy host kept it waiting), and a hard limit that always ends a call.
After a timeout, later calls get the exercise's floor plus what is left of a fixed grace
(:class:`CallDeadlines`), decided from the exercise's figures, never from how long answers took.
Everything here is pure: the client samples the clocks (:class:`Sample`) and asks :class:`CallClock`
whether the call is over. See docs/decisions/call-deadlines.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

#: The wall-clock ceiling of a call is this many times its deadline (its own time: waiting for a CPU not counted).
WALL_MARGIN = 1.1

#: A call that used less than this share of the CPU it may use is idle: the wall-clock ceiling may end it.
IDLE_SHARE = 0.5

#: The hard limit of a call, in plain wall-clock seconds, is this many times its deadline.
HARD_FACTOR = 8.0

#: After a timeout, the grace a grading's later calls share (spent only by calls that time out), as a
#: fraction of the full deadline: 4 s for a 20 s deadline.
GRACE_FRACTION = 0.2

#: The wall-clock seconds all of a grading's calls that time out may take together, however busy the host: no
#: call runs past what is left of it, and once it is spent the later calls are not tried (they time out at
#: once, said so). Honest calls need a few CPU-seconds at most, so even a host that gives the sandbox a third
#: of a core (three runnable tasks per core, as a batch makes) answers them well inside it.
HANG_ALLOWANCE_S = 25.0

#: How often the client looks at the clocks during a call, at least and at most. Between looks it waits
#: for the sandbox's answer; looking at least every MAX_LOOK_S keeps up with short-lived threads' waits.
MIN_LOOK_S = 0.02
MAX_LOOK_S = 0.5


class Clock(str, Enum):
    """Which clock ended a call."""

    CPU = "cpu"  # the CPU budget was spent
    WALL = "wall"  # the wall-clock ceiling passed
    HARD = "hard"  # the hard wall-clock limit passed


@dataclass(frozen=True)
class Deadline:
    """What one call may take: ``seconds`` on each clock (CPU: ``seconds x cpus``), derived from ``full_s``;
    ``grace_s`` of it comes from the grading's grace (after a timeout: the rest is the floor)."""

    seconds: float
    full_s: float
    cpus: float = 1.0
    grace_s: float = 0.0
    #: What is left of the grading's hang allowance: the hard limit never passes it. Not part of what a deadline
    #: is (two calls with the same seconds have the same deadline), only of where its hard limit stands.
    allowance_s: float = field(default=float("inf"), compare=False)

    @property
    def shortened(self) -> bool:
        return self.seconds < self.full_s

    @property
    def cpu_s(self) -> float:
        return self.seconds * self.cpus

    @property
    def wall_s(self) -> float:
        return self.seconds * WALL_MARGIN

    @property
    def hard_s(self) -> float:
        return min(self.seconds * HARD_FACTOR, self.allowance_s)

    def describe(self, during: str = "") -> str:
        """``its 20 s deadline``, or ``its 1 s deadline (shortened from 20 s after an earlier call timed out)``.

        All start with "its": the sandbox client writes "a call ran past " before them, and
        :meth:`Expiry.describe` after them. ``during`` (" while importing the submission") goes right after
        the word deadline.
        """
        said = f"its {_seconds(self.seconds)} deadline{during}"
        if self.shortened:
            said += f" (shortened from {_seconds(self.full_s)} after an earlier call timed out)"
        return said


@dataclass(frozen=True)
class Sample:
    """The clocks at one moment: monotonic seconds, and the sandbox's cumulative CPU seconds and
    seconds waited for a CPU (None: that counter cannot be read for this sandbox)."""

    wall_s: float
    cpu_s: float | None = None
    waited_s: float | None = None


@dataclass(frozen=True)
class Expiry:
    """Why a call is over: which clock, and what each clock said since the call began."""

    clock: Clock
    elapsed_s: float
    cpu_s: float | None
    waited_s: float | None
    deadline: Deadline

    def describe(self) -> str:
        """What follows the deadline in a timeout message: which clock applied, with the figures."""
        d = self.deadline
        if self.clock is Clock.CPU:
            return (f": it used {self.cpu_s:.1f} of its {_number(d.cpu_s)} CPU-seconds "
                    f"({_seconds(self.elapsed_s)} by the clock)")
        used = (f"with {self.cpu_s:.1f} CPU-seconds used" if self.cpu_s is not None
                else "(the sandbox's CPU time could not be read here)")
        if self.clock is Clock.HARD:
            why = f"{HARD_FACTOR:g}x the deadline" if d.hard_s == d.seconds * HARD_FACTOR else \
                "what was left of the grading's time for calls that time out"
            return (f": the hard limit of {_seconds(d.hard_s)} by the clock ({why}) passed "
                    f"{used}; the sandbox waited {self.waited_s or 0:.1f} s of it for a CPU the machine was busy with")
        waited = (f"; {self.waited_s:.1f} s it waited for a CPU not counted"
                  if self.waited_s is not None and self.waited_s >= 0.05 else "")
        return f": the wall-clock ceiling of {_seconds(d.wall_s)} passed {used}{waited}"


class CallClock:
    """Whether one call is past its deadline, from samples of the clocks; and when to look again.

    ``start`` is the sample taken as the call was sent; ``cpu_rate`` the most CPU seconds per second the
    sandbox can use (its CPU quota), which says how soon the budget could run out at the earliest.
    A counter known at the start but not later (a read that failed) counts as not grown.
    """

    def __init__(self, deadline: Deadline, start: Sample, cpu_rate: float = 1.0):
        self.deadline = deadline
        self.start = start
        self.cpu_rate = max(cpu_rate, 1e-3)

    def _used(self, now: Sample) -> tuple[float, float | None, float | None]:
        elapsed = max(0.0, now.wall_s - self.start.wall_s)
        cpu = waited = None
        if self.start.cpu_s is not None:
            cpu = max(0.0, (now.cpu_s if now.cpu_s is not None else self.start.cpu_s) - self.start.cpu_s)
        if self.start.waited_s is not None:
            grown = (now.waited_s if now.waited_s is not None else self.start.waited_s) - self.start.waited_s
            waited = min(max(0.0, grown), elapsed)
        return elapsed, cpu, waited

    def expired(self, now: Sample) -> Expiry | None:
        """The expiry, if a clock says the call is over at ``now``; None while it may go on."""
        d = self.deadline
        elapsed, cpu, waited = self._used(now)
        clock = None
        own = elapsed - (waited or 0.0)
        if cpu is not None and cpu >= d.cpu_s:
            clock = Clock.CPU
        elif own >= d.wall_s and (cpu is None or cpu < IDLE_SHARE * d.cpus * own):
            clock = Clock.WALL
        elif elapsed >= d.hard_s:
            clock = Clock.HARD
        return None if clock is None else Expiry(clock, elapsed, cpu, waited, d)

    def next_look(self, now: Sample) -> float:
        """Seconds from ``now`` until a clock could first run out (within [MIN_LOOK_S, MAX_LOOK_S])."""
        d = self.deadline
        elapsed, cpu, waited = self._used(now)
        soonest = min(d.wall_s - (elapsed - (waited or 0.0)), d.hard_s - elapsed)
        if cpu is not None:
            soonest = min(soonest, (d.cpu_s - cpu) / self.cpu_rate)
        return min(MAX_LOOK_S, max(MIN_LOOK_S, soonest))


class CallDeadlines:
    """What the next call of one grading may take: the full deadline until a call has timed out, then
    the floor plus what is left of the grace. The sandbox client tells it which calls timed out; nothing else.

    Not locked: the client asks and reports under its own call lock.
    """

    def __init__(self, *, full_s: float, after_timeout_s: float, cpus: float = 1.0,
                 allowance_s: float = HANG_ALLOWANCE_S):
        if full_s <= 0 or after_timeout_s <= 0 or cpus <= 0 or allowance_s <= 0:
            raise ValueError(f"call deadlines must be positive, got full_s={full_s!r}, "
                             f"after_timeout_s={after_timeout_s!r}, cpus={cpus!r}, allowance_s={allowance_s!r}")
        self.full_s = full_s
        self.after_timeout_s = after_timeout_s
        self.cpus = cpus
        self.timeouts = 0
        self.grace_left_s = GRACE_FRACTION * full_s
        self.allowance_s = allowance_s
        self.allowance_left_s = allowance_s

    @property
    def spent(self) -> bool:
        """The grading's hang allowance is spent: the later calls are not tried."""
        return self.allowance_left_s < MIN_LOOK_S * 10

    def next(self, full_s: float | None = None) -> Deadline:
        """The deadline of the next call; ``full_s`` replaces the exercise's for this call only."""
        full = full_s or self.full_s
        if not self.timeouts:
            return Deadline(full, full, self.cpus, allowance_s=self.allowance_left_s)
        floor = min(full, self.after_timeout_s)
        seconds = min(full, floor + self.grace_left_s)
        return Deadline(seconds, full, self.cpus, grace_s=seconds - floor, allowance_s=self.allowance_left_s)

    def timed_out(self, deadline: Deadline, elapsed_s: float = 0.0) -> None:
        """A call ran past ``deadline`` after ``elapsed_s`` by the clock: every call after it gets the shortened
        deadline, the grace it was given is spent, and so is that much of the hang allowance."""
        self.timeouts += 1
        self.grace_left_s = max(0.0, self.grace_left_s - deadline.grace_s)
        self.allowance_left_s = max(0.0, self.allowance_left_s - elapsed_s)

    def not_tried(self) -> str:
        """Why a call after the allowance is spent is not tried: the judge's words."""
        return (f"not tried: this grading's calls that timed out had taken the {_seconds(self.allowance_s)} it "
                f"allows them ({self.timeouts} timed out), so the rest time out without running")


def _number(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _seconds(s: float) -> str:
    """``20 s``, ``1.5 s``, ``0.25 s``: what a reader needs, without float noise."""
    return _number(s) + " s"
