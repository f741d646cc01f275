"""The batch's progress: counts, rate per minute and time left, and who is being graded for how long.

The gradings in flight are listed under the bar, the longest-running first, with
the time each has taken so far, so a slow grading is visible while it happens
(not only in the total at the end). That list is a :class:`grader.progress.Work`,
plain data tested with a clock of its own. Off a terminal, a ``progress:`` line
says the same at least every 10 s (``grader.cli.heartbeat``).
"""

from __future__ import annotations

import contextlib
import time

from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from grader.batch.runner import Listener
from grader.cli.heartbeat import Heartbeat, WorkDisplay
from grader.progress import Work
from grader.untrusted import in_markup


class ProgressListener(Listener):
    def __init__(self, console):
        self.console = console
        self.work = Work("grading")
        self.progress = WorkDisplay(TextColumn("[bold]grading[/]"), BarColumn(), MofNCompleteColumn(),
                                    TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("eta"),
                                    TimeRemainingColumn(), TextColumn("{task.fields[note]}"), console=console,
                                    transient=False, work=self.work, heading="now grading:",
                                    disable=not console.is_terminal)
        self.heartbeat = Heartbeat(console, self.work.line) if not console.is_terminal else contextlib.nullcontext()
        self.task = None
        self.t0 = time.perf_counter()
        self.done = 0

    def __enter__(self):
        self.progress.__enter__()
        self.heartbeat.__enter__()
        return self

    def __exit__(self, *exc):
        self.heartbeat.__exit__(*exc)
        self.work.clear()  # an interrupted batch's last frame lists nothing as still running
        return self.progress.__exit__(*exc)

    def planned(self, *, to_grade: int, already: int) -> None:
        note = f"{already} already graded" if already else ""
        self.work.plan(to_grade)
        self.task = self.progress.add_task("grading", total=to_grade, rate="", note=note)
        self.t0 = time.perf_counter()

    def started(self, found) -> None:
        self.work.start(f"{found.candidate}/{found.exercise}")

    def graded(self, found, report) -> None:
        self.work.finish(f"{found.candidate}/{found.exercise}")
        self.done += 1
        per_minute = self.done / max(time.perf_counter() - self.t0, 1e-9) * 60
        self.progress.update(self.task, advance=1, rate=f"{per_minute:.1f}/min")
        if not report.graded:
            self.progress.console.print(f"[red]not graded[/] {in_markup(found.candidate)}/{in_markup(found.exercise)}: "
                                        f"{in_markup(report.not_graded_reason or '')}")

    def retrying(self, found, reason: str, attempt: int) -> None:
        self.work.drop(f"{found.candidate}/{found.exercise}")
        self.progress.console.print(f"[yellow]retrying[/] {in_markup(found.candidate)}/{in_markup(found.exercise)} "
                                    f"(attempt {attempt} failed: {in_markup(reason)})")
