"""The batch's progress bar: counts, rate per minute and time left, drawn by rich."""

from __future__ import annotations

import time

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from grader.batch.runner import Listener
from grader.untrusted import in_markup


class ProgressListener(Listener):
    def __init__(self, console):
        self.console = console
        self.progress = Progress(TextColumn("[bold]grading[/]"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("eta"),
                                 TimeRemainingColumn(), TextColumn("{task.fields[note]}"), console=console,
                                 transient=False)
        self.task = None
        self.t0 = time.perf_counter()
        self.done = 0

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        return self.progress.__exit__(*exc)

    def planned(self, *, to_grade: int, already: int) -> None:
        note = f"{already} already graded" if already else ""
        self.task = self.progress.add_task("grading", total=to_grade, rate="", note=note)
        self.t0 = time.perf_counter()

    def graded(self, found, report) -> None:
        self.done += 1
        per_minute = self.done / max(time.perf_counter() - self.t0, 1e-9) * 60
        self.progress.update(self.task, advance=1, rate=f"{per_minute:.1f}/min")
        if not report.graded:
            self.progress.console.print(f"[red]not graded[/] {in_markup(found.candidate)}/{in_markup(found.exercise)}: "
                                        f"{in_markup(report.not_graded_reason or '')}")

    def retrying(self, found, reason: str, attempt: int) -> None:
        self.progress.console.print(f"[yellow]retrying[/] {in_markup(found.candidate)}/{in_markup(found.exercise)} "
                                    f"(attempt {attempt} failed: {in_markup(reason)})")
