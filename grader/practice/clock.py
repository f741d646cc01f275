"""Timed mode: one clock per exercise, like the real interview's time limit.

``grader start NAME`` starts a clock; every ``grader submit`` while it runs puts
the elapsed time on the scorecard (:func:`timing_for`) and marks a submission
made after the limit as late. The clock keeps running across submissions (a
candidate may submit several times within the hour) until ``--stop`` or
``--restart``. Clocks live in the practice database so they survive closing the
terminal; times are stored in UTC and shown in local time.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass
from pathlib import Path

from grader.errors import UsageError
from grader.practice.store import connect
from grader.reports.model import Timing
from grader.reports.headline import fmt_duration, fmt_points

DEFAULT_MINUTES = 45.0
UTC = _dt.timezone.utc


def _utc(moment: _dt.datetime | None) -> _dt.datetime:
    """``moment`` (now when ``None``) as an aware UTC datetime; a naive one is taken to be UTC already."""
    if moment is None:
        return _dt.datetime.now(UTC)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def fmt_local(moment: _dt.datetime | str) -> str:
    """A UTC moment (datetime or ISO 8601 text) in the user's local time, to the minute: ``2025-01-05 14:02``."""
    if isinstance(moment, str):
        moment = _dt.datetime.fromisoformat(moment)
    return _utc(moment).astimezone().strftime("%Y-%m-%d %H:%M")


@dataclass(frozen=True)
class Clock:
    """A running timed-mode clock: when it started and how long the candidate has."""

    exercise: str
    started_at: _dt.datetime  # aware, UTC
    minutes: float

    @property
    def deadline(self) -> _dt.datetime:
        return self.started_at + _dt.timedelta(minutes=self.minutes)

    def elapsed_s(self, now: _dt.datetime | None = None) -> float:
        """Seconds since the start (0 if ``now`` is before it: a clock set back is not negative time)."""
        return max(0.0, (_utc(now) - self.started_at).total_seconds())

    def over(self, now: _dt.datetime | None = None) -> bool:
        """Whether ``now`` is past the limit."""
        return self.elapsed_s(now) > 60 * self.minutes

    def describe(self, now: _dt.datetime | None = None) -> str:
        """``"started 2025-01-05 14:02, 23 min 10 s ago (limit 45 min)"``, in local time."""
        return (f"started {fmt_local(self.started_at)}, {fmt_duration(self.elapsed_s(now))} ago "
                f"(limit {fmt_points(self.minutes)} min{', now past it' if self.over(now) else ''})")


def _check_minutes(minutes: float) -> float:
    if isinstance(minutes, bool) or not (isinstance(minutes, (int, float)) and 0 < minutes < math.inf):
        shown = f"{minutes:g}" if isinstance(minutes, (int, float)) else repr(minutes)
        raise UsageError(f"--minutes must be a number of minutes above 0, got {shown}.",
                         hint=f"For the usual interview length, leave it out ({fmt_points(DEFAULT_MINUTES)} min).")
    return float(minutes)


def _clock(row) -> Clock:
    return Clock(row["exercise"], _utc(_dt.datetime.fromisoformat(row["started_at"])), row["minutes"])


def start(exercise: str, minutes: float = DEFAULT_MINUTES, *, restart: bool = False,
          now: _dt.datetime | None = None, db: Path | None = None) -> Clock:
    """Start the clock for ``exercise``; refuse if one already runs, unless ``restart``."""
    clock = Clock(exercise, _utc(now), _check_minutes(minutes))
    values = (exercise, clock.started_at.isoformat(timespec="seconds"), clock.minutes)
    with connect(db) as conn:
        if restart:
            conn.execute("INSERT OR REPLACE INTO clocks (exercise, started_at, minutes) VALUES (?, ?, ?)", values)
            return clock
        # One statement: two `grader start` at once cannot both think they started the clock.
        cur = conn.execute("INSERT OR IGNORE INTO clocks (exercise, started_at, minutes) VALUES (?, ?, ?)", values)
        if cur.rowcount == 1:
            return clock
        running = _clock(conn.execute("SELECT * FROM clocks WHERE exercise = ?", (exercise,)).fetchone())
    raise UsageError(
        f"A clock for {exercise!r} is already running: {running.describe(now)}.",
        hint=f"Run `grader start {exercise} --restart` to start again from zero, "
             f"or `grader start {exercise} --stop` to end timed mode.",
    )


def current(exercise: str, *, db: Path | None = None) -> Clock | None:
    """The clock running for ``exercise``, if any."""
    with connect(db) as conn:
        row = conn.execute("SELECT * FROM clocks WHERE exercise = ?", (exercise,)).fetchone()
    return None if row is None else _clock(row)


def stop(exercise: str, *, db: Path | None = None) -> Clock | None:
    """End timed mode for ``exercise``; the clock that was running, or ``None`` if none was."""
    with connect(db) as conn:
        conn.execute("BEGIN IMMEDIATE")  # no DELETE ... RETURNING: older SQLite builds (< 3.35) lack it
        row = conn.execute("SELECT * FROM clocks WHERE exercise = ?", (exercise,)).fetchone()
        conn.execute("DELETE FROM clocks WHERE exercise = ?", (exercise,))
        conn.execute("COMMIT")
    return None if row is None else _clock(row)


def timing_for(exercise: str, now: _dt.datetime | None = None, *, db: Path | None = None) -> Timing | None:
    """What ``grader submit`` puts on the report: elapsed time and lateness, or ``None`` outside timed mode."""
    clock = current(exercise, db=db)
    if clock is None:
        return None
    now = _utc(now)  # one moment for both the elapsed time and the lateness
    return Timing(
        clock_started_at=clock.started_at.isoformat(timespec="seconds"),
        limit_minutes=clock.minutes,
        elapsed_s=round(clock.elapsed_s(now), 1),
        over_limit=clock.over(now),
    )
