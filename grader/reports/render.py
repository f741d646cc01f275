"""Render a :class:`~grader.reports.model.Report` as HTML or Markdown, and write report files.

Everything here reads the report data alone, so a stored JSON report re-renders
without grading again. Redaction for an audience happens once, in
:func:`grader.reports.redact.for_audience`, which :func:`scorecard_view` applies
before any template sees the data: a template cannot leak what it was never
given, and the candidate's JSON is that same copy. The terminal renderer
(``terminal.py``) reads the same view.

Candidate output and messages are untrusted text. HTML templates are autoescaped;
Markdown goes through :func:`md_text`, :func:`md_code` and :func:`md_fence`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from grader.atomic import atomic_write
from grader.errors import UsageError
from grader.reports import templating
from grader.reports.model import (FINDING_LABELS, VIOLATION_LABELS, CheckResult, Diagnosis, FollowUp, LoadError, Report,
                                  Status, Timing, Visibility, not_run_message)
from grader.reports.headline import NOT_RUN, StatusCount, fmt_points, not_counted_lines
from grader.reports.problems import ProblemGroup, group_problems
from grader.reports.redact import for_audience

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
def fmt_duration(seconds: float) -> str:
    """``1390.4`` -> ``"23 min 10 s"``, ``3605`` -> ``"1 h 5 s"``: whole seconds, zero parts left out."""
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{n} {unit}" for n, unit in ((hours, "h"), (minutes, "min"), (secs, "s")) if n]
    return " ".join(parts) or "0 s"


def short_hash(value: str | None, n: int = 12) -> str:
    """First ``n`` hex digits of a digest, without a ``sha256:`` prefix."""
    if not value:
        return ""
    return value.split(":", 1)[-1][:n]


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
    duration_s: float
    not_run: bool = False  # the file did not import: the cause is the view's load_error

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
class HitView:
    api: str
    how: str
    where: str
    via: str = ""  # the private spelling the source used, when not the API's own name


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


def _diagnosis_view(d: Diagnosis) -> DiagnosisView:
    return DiagnosisView(d.line, d.mutant)


def _follow_up_view(f: FollowUp) -> FollowUpView:
    return FollowUpView(f.ask, f.answer, f.because)


@dataclass(frozen=True)
class ScorecardView:
    """What every renderer shows, for one audience."""

    audience: str
    exercise: str
    title: str
    candidate: str | None  # named on a batch's scorecards, so tabs and printouts can be told apart
    file: str  # the graded file's path (its name alone in reports stored before paths were recorded)
    graded: bool
    not_graded_reason: str
    score: str | None  # "7", None when not graded
    max_score: str | None
    percent: int | None
    counts: list[StatusCount]  # the statuses that occur
    checks: list[CheckView]
    problems: list[CheckView]  # not redacted, failed / error / timeout
    forbidden: list[HitView]
    findings: list[FindingView]
    warnings: list[str]
    environment: list[tuple[str, str]]  # (label, value), empty values left out
    started_at: str
    duration: str
    timing: str | None = None  # "Time: 23 min 10 s of 45 min, on time"; None outside timed mode
    late: bool = False
    late_note: str = ""  # "LATE: submitted 5 min 3 s after the 45-minute limit" when late
    hidden_summary: str = ""  # "2 hidden checks (5 points): 1 passed, 1 not passed"; "" when none
    load_error: LoadErrorView | None = None
    groups: tuple[ProblemGroup, ...] = ()  # the problems, identical ones together (``grader.reports.problems``)
    diagnosis: tuple[DiagnosisView, ...] = ()  # nearest named mistakes; a candidate's only where all is visible
    follow_ups: tuple[FollowUpView, ...] = ()  # interview questions: the panel's view only
    not_counted: tuple[str, ...] = ()  # "2 GPU checks (4 points) not run: no GPU in the sandbox", by the score
    check_errors: tuple[str, ...] = ()  # names of checks whose own code raised: why the grading is not graded

    @property
    def table_checks(self) -> list[CheckView]:
        """The rows of the checks table: none when the file did not import and so no check ran at all."""
        if self.load_error is not None and all(c.not_run or c.status == "skipped" for c in self.checks):
            return []
        return self.checks

    @property
    def counts_line(self) -> str:
        """``"✓ 2 passed · ✗ 3 failed · ! 11 errors"``: each status that occurs, with its count."""
        return " · ".join(c.text for c in self.counts)

    @property
    def headline(self) -> str:
        """The score with what it leaves out, as every format's head says it:
        ``"21/21 (100%) · 2 GPU checks (4 points) not run: no GPU in the sandbox"``."""
        if not self.graded:
            return "not graded"
        score = f"{self.score}/{self.max_score}" + (f" ({self.percent}%)" if self.percent is not None else "")
        return " · ".join([score, *self.not_counted])


def check_audience(audience: str) -> str:
    if audience not in AUDIENCES:
        raise UsageError(
            f"Unknown audience {audience!r}; expected one of: {', '.join(AUDIENCES)}.",
            hint="Use 'candidate' for a report shared with the candidate, 'panel' for the hiring panel.",
        )
    return audience


def _check_view(c: CheckResult, *, redacted_copy: bool, graded: bool) -> CheckView:
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
        message=c.message,
        details=c.details,
        counterexample=c.counterexample,
        hint=c.hint,
        forbidden=list(c.forbidden),  # report-level hits still name the API
        output=c.output,
        output_truncated=c.output_truncated,
        duration_s=c.duration_s,
        not_run=c.not_run,
    )


def _gpus_line(e) -> str:
    """What was asked for and what the sandbox saw: "all (the sandbox saw 1)"."""
    if not e.gpus:
        return ""
    return e.gpus + (f" (the sandbox saw {e.sandbox_gpus})" if e.sandbox_gpus is not None else "")


def _environment_rows(report: Report) -> list[tuple[str, str]]:
    e = report.environment
    image = " ".join(x for x in (e.image or "", f"({short_hash(e.image_id)})" if e.image_id else "") if x)
    rows = [
        ("Submission", e.submission_path or e.submission_name),
        ("SHA-256", e.submission_sha256),
        ("Exercise version", e.exercise_version),
        ("Sandbox", e.sandbox),
        ("OCI runtime", e.oci_runtime or ""),
        ("Image", image),
        ("torch (sandbox)", e.torch_version or ""),
        ("torch (judge)", e.judge_torch_version or ""),
        ("Python", e.python_version or ""),
        ("GPUs", _gpus_line(e)),
        ("CUDA (sandbox)", e.cuda_version or ""),
        ("Hypothesis seed", str(e.hypothesis_seed)),
        ("Limits", ", ".join(f"{k}={v}" for k, v in sorted(e.limits.items()))),
        ("Grader", e.grader_version),
    ]
    return [(label, value) for label, value in rows if value]


def _hidden_summary(report: Report, audience: str) -> str:
    """How many hidden checks there are, their points, and how many passed: all a candidate may know."""
    hidden = [c for c in report.checks if c.visibility is Visibility.HIDDEN and c.status is not Status.SKIPPED]
    if not hidden:
        return ""
    passed = sum(c.status is Status.PASSED for c in hidden)
    points = fmt_points(sum(c.max_score for c in hidden))
    line = (f"{len(hidden)} hidden check{'s' if len(hidden) != 1 else ''} ({points} points): "
            f"{passed} passed, {len(hidden) - passed} not passed")
    return line + (" (their inputs and expected values stay hidden)" if audience == "candidate" else "")


def _timing_lines(timing: Timing | None) -> tuple[str | None, bool, str]:
    """Timed mode in words (``timing``, ``late``, ``late_note``), so no renderer relies on colour for "late".

    The limit reads in the same units as the time spent ("5 s of 3 s", "23 min 10 s of 45 min"), never
    "5 s of 0.05 min"."""
    if timing is None:
        return None, False, ""
    limit = fmt_duration(60 * timing.limit_minutes)
    line = f"Time: {fmt_duration(timing.elapsed_s)} of {limit}"
    if not timing.over_limit:
        return f"{line}, on time", False, ""
    over = fmt_duration(timing.elapsed_s - 60 * timing.limit_minutes)
    return line, True, f"LATE: submitted {over} after the {limit} limit"


def _load_error_view(error: LoadError | None, checks: list[CheckResult]) -> LoadErrorView | None:
    if error is None:
        return None
    not_run = [c for c in checks if c.not_run]
    return LoadErrorView(summary=error.summary, line=error.line, traceback=error.traceback, not_run=len(not_run),
                         not_run_points=fmt_points(sum(c.max_score for c in not_run)), found=error.found)


#: How checks that did not run are counted in the header: apart from errors the candidate's code raised.
NOT_RUN_SYMBOL = "–"


def _counts(report: Report) -> list[StatusCount]:
    """One count for each status that occurs; checks that never ran are "not run", not "error"."""
    not_run = sum(c.not_run for c in report.checks)
    counts = [StatusCount(SYMBOLS[s], s.value, n - (not_run if s is Status.ERROR else 0))
              for s, n in report.counts().items()]
    return [c for c in counts if c.n] + ([StatusCount(NOT_RUN_SYMBOL, NOT_RUN, not_run)] if not_run else [])


def scorecard_view(report: Report, *, audience: str = "panel") -> ScorecardView:
    """The report as ``audience`` may see it: hidden checks' details withheld for a candidate."""
    check_audience(audience)
    report = for_audience(report, audience)  # the one redaction: the candidate's JSON is this same copy
    redacted_copy = report.audience == "candidate"
    audience = "candidate" if redacted_copy else audience  # a stored candidate copy shows as one
    checks = [_check_view(c, redacted_copy=redacted_copy, graded=report.graded) for c in report.checks]
    # for_audience already named a hidden check's hits and findings by its safe name, never its id.
    forbidden = [HitView(h.api, h.how, h.where, h.via) for h in report.forbidden]
    findings = [FindingView(f.kind.value, FINDING_LABELS[f.kind], f.what, f.where, f.how) for f in report.findings]
    # The subset's violations first: any one left every check not run. The text is the judge's own.
    findings = [FindingView("violation", VIOLATION_LABELS[v.code], v.text, v.where, v.how)
                for v in report.violations] + findings
    graded = report.graded
    timing, late, late_note = _timing_lines(report.timing)
    problems = [c for c in checks if c.is_problem and not c.redacted]
    return ScorecardView(
        load_error=_load_error_view(report.load_error, report.checks),
        groups=tuple(group_problems(problems)),
        diagnosis=tuple(map(_diagnosis_view, report.diagnosis)),
        follow_ups=tuple(map(_follow_up_view, report.follow_ups)),
        hidden_summary=_hidden_summary(report, audience) if graded else "",
        audience=audience,
        exercise=report.exercise,
        title=report.title or report.exercise,
        candidate=report.candidate,
        file=report.environment.submission_path or report.environment.submission_name,
        graded=graded,
        not_graded_reason=(report.not_graded_reason or "no reason recorded") if not graded else "",
        score=fmt_points(report.score) if graded else None,
        max_score=fmt_points(report.max_score) if graded else None,
        percent=round(100 * report.score / report.max_score) if graded and report.max_score > 0 else None,
        counts=_counts(report),
        not_counted=tuple(not_counted_lines(report.checks)),
        check_errors=tuple(c.name or c.id for c in report.checks if c.status is Status.CHECK_ERROR),
        checks=checks,
        problems=problems,
        forbidden=forbidden,
        findings=findings,
        warnings=list(report.warnings),
        environment=_environment_rows(report),
        started_at=report.started_at,
        duration=f"{report.duration_s:.1f} s",
        timing=timing,
        late=late,
        late_note=late_note,
    )


# --- Markdown escaping ------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]#|~])")


def _html_entities(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def md_text(value: object) -> str:
    """Untrusted text as inline Markdown, safe in a table cell too.

    No raw HTML (``<`` ``>`` ``&`` as entities), pipes and formatting characters
    backslash-escaped, line breaks as ``<br>`` so a cell stays on one line.
    """
    text = _MD_SPECIAL.sub(r"\\\1", _html_entities(str(value or "").strip()))
    return "<br>".join(line.strip() for line in text.splitlines())


def md_code(value: object) -> str:
    """Untrusted text as a one-line Markdown code span, safe in a table cell."""
    text = " ".join(str(value or "").split()).replace("|", "\\|")
    if not text:
        return ""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def md_fence(value: object, lang: str = "text") -> str:
    """A fenced code block that the content cannot close early (fence longer than any backtick run)."""
    text = str(value or "").rstrip("\n")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


# --- Templates ----------------------------------------------------------------------------------

_env = templating.environment("grader.reports")
_env.filters.update(md_text=md_text, md_code=md_code, md_fence=md_fence, short_hash=short_hash)


def render_html(report: Report, *, audience: Audience = "panel") -> str:
    """A self-contained HTML scorecard (inline CSS, no scripts, no remote assets)."""
    return _env.get_template("scorecard.html.j2").render(v=scorecard_view(report, audience=audience))


def render_markdown(report: Report, *, audience: Audience = "panel") -> str:
    """A Markdown scorecard (GitHub-flavoured tables)."""
    return _env.get_template("scorecard.md.j2").render(v=scorecard_view(report, audience=audience))


# --- Files ---------------------------------------------------------------------------------------


def _check_target(path: str | os.PathLike[str], kind: str) -> Path:
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"Cannot write the {kind} report to {str(p)!r}: it is a directory.",
                         hint=f"Give a file path, e.g. {str(p / ('report.' + kind.lower()))!r}.")
    if p.suffix.lower() == ".py" or (p.exists() and p.resolve().suffix.lower() == ".py"):
        raise UsageError(f"Refusing to write the {kind} report to {str(p)!r}: it is a Python file "
                         "(a report never overwrites code).",
                         hint=f"Use a .{kind.lower()} path instead.")
    return p


def check_report_paths(
    *,
    json_path: str | os.PathLike[str] | None = None,
    html_path: str | os.PathLike[str] | None = None,
    md_path: str | os.PathLike[str] | None = None,
) -> list[tuple[Path, str]]:
    """Validate where reports would go, before any grading: ``[(path, kind), ...]``.

    A directory, a ``.py`` file or two formats aimed at one file raise
    :class:`~grader.errors.UsageError` naming the path.
    """
    targets: list[tuple[Path, str]] = []
    for path, kind in ((json_path, "JSON"), (html_path, "HTML"), (md_path, "Markdown")):
        if path is not None:
            targets.append((_check_target(path, kind), kind))
    seen: dict[Path, str] = {}
    for p, kind in targets:
        key = p.resolve()
        if key in seen:
            raise UsageError(f"The {seen[key]} and {kind} reports would both be written to {str(p)!r}.")
        seen[key] = kind
    return targets


def write_reports(
    report: Report,
    *,
    json_path: str | os.PathLike[str] | None = None,
    html_path: str | os.PathLike[str] | None = None,
    md_path: str | os.PathLike[str] | None = None,
    audience: Audience = "panel",
) -> list[Path]:
    """Write the requested formats, creating parent folders; return the paths written.

    Every path is checked first (see ``check_report_paths``), so nothing is written
    when one is bad. Every format holds what ``audience`` may see: for a candidate,
    the JSON is :func:`~grader.reports.redact.for_audience`'s copy, which the
    scorecards are rendered from too.
    """
    check_audience(audience)
    targets = check_report_paths(json_path=json_path, html_path=html_path, md_path=md_path)
    report = for_audience(report, audience)

    render = {
        "JSON": lambda: report.to_json() + "\n",
        "HTML": lambda: render_html(report, audience=audience),
        "Markdown": lambda: render_markdown(report, audience=audience),
    }
    written = []
    for p, kind in targets:
        text = render[kind]()
        try:
            with atomic_write(p) as f:  # a reader never sees half a report
                f.write(text)
        except OSError as exc:
            raise UsageError(f"Cannot write the {kind} report to {str(p)!r}: {exc.strerror or exc}.") from exc
        written.append(p)
    return written
