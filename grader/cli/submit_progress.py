"""``grader submit``'s progress line: which check is running and how many are left.

:class:`CheckProgress` is the state, fed with the judge's events (``grader.host.live``)
and asked for its line; it knows nothing of terminals, so it is tested by feeding
events. :func:`check_progress` shows that line on stderr while the grading runs: on a
terminal in place, taken away before the scorecard is printed; elsewhere (a pipe, a
file) as a ``progress:`` line at least every 10 s of a grading that takes that long
(``grader.cli.heartbeat``). The scorecard on stdout, and the reports, stay exactly as without it.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.text import Text

from grader.wire.events import CheckFinished, Collected, JudgeEvent, Started
from grader.reports.model import Status, Visibility
from grader.reports.redact import candidate_names
from grader.reports.headline import StatusCount
from grader.reports.views import SYMBOLS
from grader.untrusted import shown

STARTING = "starting the judge and the sandbox…"


class CheckProgress:
    """Where a grading is: the checks it will run, the one running, how many finished and how."""

    def __init__(self, *, audience: str = "candidate"):
        self.audience = audience
        self.names: dict[str, str] = {}
        self.hidden: set[str] = set()
        self.running: str | None = None
        self.finished: Counter[Status] = Counter()

    def feed(self, event: JudgeEvent) -> None:
        if isinstance(event, Collected):
            # A hidden check's name can hold its inputs (a parametrized id): a candidate sees the safe name.
            safe = candidate_names(list(event.checks)) if self.audience == "candidate" else {}
            self.names = {c.id: safe.get(c.id, c.name) for c in event.checks}
            self.hidden = {c.id for c in event.checks if c.visibility is Visibility.HIDDEN}
        elif isinstance(event, Started):
            self.running = event.id
        elif isinstance(event, CheckFinished):
            self.finished[event.status] += 1
            if self.running == event.id:
                self.running = None

    @property
    def total(self) -> int:
        return len(self.names)

    @property
    def done(self) -> int:
        return sum(self.finished.values())

    def line(self) -> str:
        """``"check 3 of 12 · 9 left · ✓ 2 passed · softmax rows sum to one (hidden)"``: the counts first,
        so a long check name is what a narrow terminal cuts off."""
        if not self.names:
            return STARTING
        tally = "".join(f" · {StatusCount(SYMBOLS[s], s.value, n).text}" for s, n in self.finished.items())
        if self.done >= self.total:
            return f"all {self.total} checks run{tally}; writing the scorecard"
        if self.running is None:
            return f"{self.done} of {self.total} checks run{tally}"
        name = shown(self.names.get(self.running, "a check"), newlines=False)
        hidden = " (hidden)" if self.running in self.hidden else ""
        return (f"check {min(self.done + 1, self.total)} of {self.total} · {self.total - self.done - 1} left"
                f"{tally} · {name}{hidden}")


@contextlib.contextmanager
def check_progress(console: Console, *, audience: str) -> Iterator[Callable[[JudgeEvent], None] | None]:
    """A listener for ``grade(on_event=...)`` that keeps a line on ``console`` up to date: in place on a terminal,
    else a ``progress:`` line every 10 s while the grading runs."""
    state = CheckProgress(audience=audience)
    if not console.is_terminal:
        from grader.cli.heartbeat import Heartbeat

        with Heartbeat(console, state.line):
            yield state.feed
        return
    with console.status(Text(state.line()), spinner="dots") as status:
        def on_event(event: JudgeEvent) -> None:
            state.feed(event)
            status.update(Text(state.line(), overflow="ellipsis", no_wrap=True))

        yield on_event
