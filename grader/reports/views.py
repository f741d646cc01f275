"""What a renderer shows of one check and of the parts around it, for one audience.

Views are plain frozen records built from a report already redacted for their audience
(:func:`grader.reports.redact.for_audience`), so a template or the terminal renderer gets
strings to print, never a field it would have to know to leave out. The whole scorecard
is :mod:`grader.reports.scorecard`; grouping the problems, :mod:`grader.reports.problems`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from grader.errors import UsageError
from grader.reports.headline import fmt_points
from grader.reports.model import CheckResult, Diagnosis, FollowUp, Status, Visibility, not_run_message
from grader.reports.tracebacks import format_trace


Audience = Literal["panel", "candidate"]
AUDIENCES: tuple[str, ...] = ("panel", "candidate")

#: Status -> symbol; the word is always shown beside it, so colour is never the only cue.
SYMBOLS: dict[Status, str] = {
    Status.PASSED: "✓",
    Status.FAILED: "✗",
    Status.ERROR: "!",
    Status.TIMEOUT: "◷",
    Status.SKIPPED: "○",
    Status.CHECK_ERROR: "⚠",
}
#: Statuses whose message, counterexample, hint and output get their own section.
PROBLEMS = (Status.FAILED, Status.ERROR, Status.TIMEOUT, Status.CHECK_ERROR)


@dataclass(frozen=True)
class CheckView:
    """One check as an audience may see it; redacted fields are already empty."""

    id: str
    name: str
    status: str  # the status word: passed, failed, ...
    symbol: str
    points: str  # "2/3", or "—" when the report was not graded
    hidden: bool
    redacted: bool  # hidden details withheld from this audience
    message: str
    details: str
    counterexample: str | None
    hint: str | None
    forbidden: list[str]
    output: str
    output_truncated: bool
    duration_s: float | None
    not_run: bool = False  # the file did not import: the cause is the view's load_error
    #: What a candidate reads of an error's traceback (the submission's frames), what grouping compares: the same
    #: bug reached through two probes is the same bug. A failed check's, or a view without frames: its details.
    own_details: str = ""

    @property
    def summary(self) -> str:
        """The message's first line, for a table cell."""
        return self.message.strip().split("\n", 1)[0]

    @property
    def withheld(self) -> bool:
        """A hidden check's details were withheld from this audience, and there were some: a passed (or
        skipped) check has none to withhold, so its row says nothing rather than "details withheld"."""
        return self.redacted and self.status not in ("passed", "skipped")

    @property
    def forbidden_unmentioned(self) -> list[str]:
        """Forbidden APIs the summary does not already name, for a table cell."""
        return [api for api in self.forbidden if api not in self.summary]

    @property
    def is_problem(self) -> bool:
        return self.status in {s.value for s in PROBLEMS} and not self.not_run


@dataclass(frozen=True)
class LoadErrorView:
    """The file does not import: said once, at the top, instead of once per check."""

    summary: str  # "SyntaxError: '(' was never closed"
    line: int | None
    traceback: str  # the candidate's frames, or Python's own report of a syntax error
    not_run: int  # how many checks did not run because of it
    not_run_points: str
    found: str = "sandbox"  # LoadError.found: "stub" is no import error at all

    @property
    def headline(self) -> str:
        """"The file does not import: <cause> (line N)", or, for a reason that is no import error (the
        untouched stub; any other reason the judge answers alone for), the reason itself."""
        where = f" (line {self.line})" if self.line else ""
        if self.found in ("source", "sandbox"):
            return f"The file does not import: {self.summary}{where}"
        return f"{self.summary[:1].upper()}{self.summary[1:]}{where}"

    @property
    def checks_line(self) -> str:
        n = self.not_run
        return f"{n} check{'s' if n != 1 else ''} ({self.not_run_points} points) {not_run_message(self.found)}"


@dataclass(frozen=True)
class ForbiddenView:
    """One forbidden API, told once: where the file writes it, and during how many checks it was called (each
    of them earned nothing; the checks table names them)."""

    api: str
    written: tuple[str, ...]  # "forbidden.py line 5": the file as submitted, never the module name it ran under
    called_in: int  # checks during which the sandbox saw it called
    via: tuple[str, ...] = ()  # the private spellings the source used, when not the API's own name

    @property
    def called_line(self) -> str:
        n = self.called_in
        return f"called during {n} check{'s' if n != 1 else ''}: no credit for {'it' if n == 1 else 'them'}" if n else ""

    @property
    def lines(self) -> list[str]:
        """The terminal's lines: where it is written (and under which spelling), then what it cost."""
        written = [f"written at {', '.join(self.written)}" + (f" (as {', '.join(self.via)})" if self.via else "")]
        return [*(written if self.written else []), *([self.called_line] if self.called_in else [])]


@dataclass(frozen=True)
class FindingView:
    """A violation of the language subset (the file never ran), or a finding of the sandbox's nets (tampering)."""

    kind: str  # FindingKind value, or "violation" (of the language subset): a CSS class
    label: str  # "tampering", or the violation's label ("module used as a value", ...)
    what: str
    where: str
    how: str


@dataclass(frozen=True)
class DiagnosisView:
    """A named mistake the grading looks like (``grader.hindsight.diagnosis``)."""

    line: str  # "looks like: <description> (matches 5 of 5 failed checks)"
    mutant: str  # the mutant's name, shown to the panel beside the line


@dataclass(frozen=True)
class FollowUpView:
    """An interview question for the panel (never in a candidate's view: ``redact`` drops them)."""

    ask: str
    answer: str
    because: str


def diagnosis_view(d: Diagnosis) -> DiagnosisView:
    return DiagnosisView(d.line, d.mutant)


def follow_up_view(f: FollowUp) -> FollowUpView:
    return FollowUpView(f.ask, f.answer, f.because)



def check_audience(audience: str) -> str:
    if audience not in AUDIENCES:
        raise UsageError(
            f"Unknown audience {audience!r}; expected one of: {', '.join(AUDIENCES)}.",
            hint="Use 'candidate' for a report shared with the candidate, 'panel' for the hiring panel.",
        )
    return audience



def check_view(c: CheckResult, *, redacted_copy: bool, graded: bool) -> CheckView:
    """One check of a report already redacted for its audience (see ``redact.for_audience``)."""
    hidden = c.visibility is Visibility.HIDDEN
    return CheckView(
        id=c.id,
        name=c.name or c.id,
        status=c.status.value,
        symbol=SYMBOLS[c.status],
        points=f"{fmt_points(c.score)}/{fmt_points(c.max_score)}" if graded else "—",
        hidden=hidden,
        redacted=hidden and redacted_copy,
        # The probe is named from its field, for the panel (a candidate's copy has none): messages never name it.
        message=c.message + (f" (probe {c.probe!r})" if c.probe else ""),
        details=c.details,
        own_details=(format_trace(c.trace, candidate=True) if c.trace is not None and c.status is not Status.FAILED
                     else c.details),
        counterexample=c.counterexample,
        hint=c.hint,
        forbidden=list(c.forbidden),  # report-level hits still name the API
        output=c.output,
        output_truncated=c.output_truncated,
        duration_s=c.duration_s,
        not_run=c.not_run,
    )

