"""The batch's progress: counts, rate per minute and time left, and who is being graded for how long.

The gradings in flight are listed under the bar, the longest-running first, with
the time each has taken so far, so a slow grading is visible while it happens
(not only in the total at the end). :class:`InFlight` is that list as plain data,
tested with a clock of its own; rich draws it on every refresh.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.text import Text

from grader.batch.runner import Listener
from grader.untrusted import in_markup, shown

#: Gradings in flight listed by name under the bar; the rest are counted.
SHOWN_IN_FLIGHT = 6


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


class InFlight:
    """Who is being graded and since when. Engines start gradings from their own threads: hence the lock."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.since: dict[tuple[str, str], float] = {}
        self.lock = threading.Lock()

    def start(self, candidate: str, exercise: str) -> None:
        with self.lock:
            self.since[candidate, exercise] = self.clock()

    def stop(self, candidate: str, exercise: str) -> None:
        with self.lock:
            self.since.pop((candidate, exercise), None)

    def clear(self) -> None:
        with self.lock:
            self.since.clear()

    def lines(self, limit: int = SHOWN_IN_FLIGHT) -> list[str]:
        """``"  ann/attention  2:31"`` per grading, longest first; ``"  +3 more"`` beyond ``limit``."""
        now = self.clock()
        with self.lock:
            items = sorted(self.since.items(), key=lambda kv: (kv[1], kv[0]))
        out = [f"  {shown(c, newlines=False)}/{shown(e, newlines=False)}  {_clock(now - t)}"
               for (c, e), t in items[:limit]]
        if len(items) > limit:
            out.append(f"  +{len(items) - limit} more")
        return out


class _BatchProgress(Progress):
    def __init__(self, *columns, in_flight: InFlight, **kwargs):
        self.in_flight = in_flight  # before rich's __init__, which may draw already
        super().__init__(*columns, **kwargs)

    def get_renderables(self):
        yield self.make_tasks_table(self.tasks)
        lines = self.in_flight.lines()
        if lines:
            yield Text("\n".join(["now grading:", *lines]), style="dim", no_wrap=True, overflow="ellipsis")


class ProgressListener(Listener):
    def __init__(self, console):
        self.console = console
        self.in_flight = InFlight()
        self.progress = _BatchProgress(TextColumn("[bold]grading[/]"), BarColumn(), MofNCompleteColumn(),
                                       TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("eta"),
                                       TimeRemainingColumn(), TextColumn("{task.fields[note]}"), console=console,
                                       transient=False, in_flight=self.in_flight)
        self.task = None
        self.t0 = time.perf_counter()
        self.done = 0

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        self.in_flight.clear()  # an interrupted batch's last frame lists nothing as still running
        return self.progress.__exit__(*exc)

    def planned(self, *, to_grade: int, already: int) -> None:
        note = f"{already} already graded" if already else ""
        self.task = self.progress.add_task("grading", total=to_grade, rate="", note=note)
        self.t0 = time.perf_counter()

    def started(self, found) -> None:
        self.in_flight.start(found.candidate, found.exercise)

    def graded(self, found, report) -> None:
        self.in_flight.stop(found.candidate, found.exercise)
        self.done += 1
        per_minute = self.done / max(time.perf_counter() - self.t0, 1e-9) * 60
        self.progress.update(self.task, advance=1, rate=f"{per_minute:.1f}/min")
        if not report.graded:
            self.progress.console.print(f"[red]not graded[/] {in_markup(found.candidate)}/{in_markup(found.exercise)}: "
                                        f"{in_markup(report.not_graded_reason or '')}")

    def retrying(self, found, reason: str, attempt: int) -> None:
        self.in_flight.stop(found.candidate, found.exercise)
        self.progress.console.print(f"[yellow]retrying[/] {in_markup(found.candidate)}/{in_markup(found.exercise)} "
                                    f"(attempt {attempt} failed: {in_markup(reason)})")
