"""Progress for a command that can take more than 10 s, on a terminal or not.

On a terminal a rich display redraws in place. Where stderr is a file or a pipe (CI, ``| tee``, a
scheduler's log) nothing can be redrawn, so :class:`Heartbeat` prints one plain line, prefixed
``progress:``, at least every 10 s while the command runs: what is done of what, and the slowest
thing running. A quick command prints none. :meth:`Heartbeat.tick` decides from a clock given to
it, so the lines are tested with a fake clock; a daemon thread calls it about once a second.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from grader.progress import Work
from grader.untrusted import shown

#: The longest a command that is not on a terminal stays silent.
EVERY_S = 10.0
PREFIX = "progress: "


class Heartbeat:
    """``line()`` on ``console`` every ``every`` seconds of the command's run, the first after ``every``."""

    def __init__(self, console: Console, line: Callable[[], str], *, every: float = EVERY_S,
                 clock: Callable[[], float] = time.monotonic, poll: float = 1.0):
        self.console, self.line, self.every, self.clock, self.poll = console, line, every, clock, poll
        self.last = clock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def tick(self) -> bool:
        """Print the line if ``every`` seconds passed since the last one (or the start); whether it did."""
        now = self.clock()
        if now - self.last < self.every:
            return False
        self.last = now
        self.console.print(Text(PREFIX + shown(self.line(), newlines=False)), soft_wrap=True, highlight=False)
        return True

    def __enter__(self) -> Heartbeat:
        self._thread = threading.Thread(target=self._run, name="grader-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self.poll):
            try:
                self.tick()
            except Exception:  # a progress line must never take the command down
                pass


class WorkDisplay(Progress):
    """A bar for ``work``, with what is in flight listed under ``heading`` (longest first)."""

    def __init__(self, *columns, work: Work, heading: str = "running:", **kwargs):
        self.work, self.heading = work, heading  # before rich's __init__, which may draw already
        super().__init__(*columns, **kwargs)

    def get_renderables(self):
        yield self.make_tasks_table(self.tasks)
        lines = self.work.lines()
        if lines:
            yield Text("\n".join([self.heading, *lines]), style="dim", no_wrap=True, overflow="ellipsis")


def progress_console(output: Console) -> Console:
    """Where a command whose results go to ``output`` shows its progress: ``output`` itself on a terminal (rich
    prints results above its live display), else stderr, so that a file or a pipe gets the results alone."""
    return output if output.is_terminal else Console(stderr=True, highlight=False)


@contextlib.contextmanager
def shown_progress(console: Console, work: Work, *, refresh: float = 0.5) -> Iterator[None]:
    """While the block runs: a bar fed by ``work`` on a terminal, else a ``progress:`` line every 10 s."""
    if not console.is_terminal:
        with Heartbeat(console, work.line):
            yield
        return
    display = WorkDisplay(TextColumn(f"[bold]{work.what}[/]"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=console, transient=True, work=work,
                          refresh_per_second=1 / refresh)
    task = display.add_task(work.what, total=work.total or None)
    stop = threading.Event()

    def follow() -> None:
        while not stop.wait(refresh):
            display.update(task, completed=work.done, total=work.total or None)

    thread = threading.Thread(target=follow, name="grader-progress", daemon=True)
    with display:
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=5)
