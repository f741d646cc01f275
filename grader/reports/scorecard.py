"""The scorecard every format shows: a report, redacted once for its audience, as plain views.

Everything here reads the report data alone, so a stored JSON report re-renders
without grading again. Redaction for an audience happens once, in
:func:`grader.reports.redact.for_audience`, which :func:`scorecard_view` applies
before any template sees the data: a template cannot leak what it was never
given, and the candidate's JSON is that same copy. HTML and Markdown
(:mod:`grader.reports.render`) and the terminal (:mod:`grader.reports.terminal`)
read this same view.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.reports.headline import NOT_RUN, StatusCount, fmt_duration, fmt_points, not_counted_lines, short_hash
from grader.reports.model import FINDING_LABELS, VIOLATION_LABELS, CheckResult, LoadError, Report, Status, Timing, Visibility
from grader.reports.problems import ProblemGroup, group_problems
from grader.reports.redact import for_audience
from grader.reports.views import (SYMBOLS, CheckView, DiagnosisView, FindingView, FollowUpView, ForbiddenView, LoadErrorView,
                                  check_audience, check_view, diagnosis_view, follow_up_view)


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
    not_graded_detail: str  # the panel's ("" in a candidate's view, and when there is none)
    score: str | None  # "7", None when not graded
    max_score: str | None
    percent: int | None
    counts: list[StatusCount]  # the statuses that occur
    checks: list[CheckView]
    problems: list[CheckView]  # not redacted, failed / error / timeout
    forbidden: list[ForbiddenView]
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
    not_run = sum(c.not_run for c in hidden)  # the file never ran: "not passed" would say they failed
    points = fmt_points(sum(c.max_score for c in hidden))
    failed = len(hidden) - passed - not_run
    told = [f"{passed} passed", *([f"{failed} not passed"] if failed or not not_run else []),
            *([f"{not_run} not run"] if not_run else [])]
    line = f"{len(hidden)} hidden check{'s' if len(hidden) != 1 else ''} ({points} points): {', '.join(told)}"
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


def forbidden_views(report: Report) -> list[ForbiddenView]:
    """The report's forbidden hits, one view per API. A static hit's ``where`` names the module the file ran
    under (``clip_grad.py:5``); a reader knows the file by the name it was submitted as (``forbidden.py``)."""
    name = report.environment.submission_name
    out = []
    for api in dict.fromkeys(h.api for h in report.forbidden):
        hits = [h for h in report.forbidden if h.api == api]
        written = [f"{name or h.where.rpartition(':')[0]} line {h.where.rpartition(':')[2]}" for h in hits
                   if h.how == "static"]
        out.append(ForbiddenView(api, tuple(dict.fromkeys(written)), len({h.where for h in hits if h.how == "runtime"}),
                                 tuple(dict.fromkeys(h.via for h in hits if h.via))))
    return out


def scorecard_view(report: Report, *, audience: str = "panel") -> ScorecardView:
    """The report as ``audience`` may see it: hidden checks' details withheld for a candidate."""
    check_audience(audience)
    report = for_audience(report, audience)  # the one redaction: the candidate's JSON is this same copy
    redacted_copy = report.audience == "candidate"
    audience = "candidate" if redacted_copy else audience  # a stored candidate copy shows as one
    checks = [check_view(c, redacted_copy=redacted_copy, graded=report.graded) for c in report.checks]
    # for_audience already named a hidden check's hits and findings by its safe name, never its id.
    forbidden = forbidden_views(report)
    findings = [FindingView(f.kind.value, FINDING_LABELS[f.kind], f.what, f.where, f.how) for f in report.findings]
    # The subset's violations first: any one left every check not run. The text is the judge's own.
    findings = [FindingView("violation", VIOLATION_LABELS[v.code], f"{v.text}: {v.fix}" if v.fix else v.text, v.where,
                            v.how)
                for v in report.violations] + findings
    graded = report.graded
    timing, late, late_note = _timing_lines(report.timing)
    problems = [c for c in checks if c.is_problem and not c.redacted]
    return ScorecardView(
        load_error=_load_error_view(report.load_error, report.checks),
        groups=tuple(group_problems(problems)),
        diagnosis=tuple(map(diagnosis_view, report.diagnosis)),
        follow_ups=tuple(map(follow_up_view, report.follow_ups)),
        hidden_summary=_hidden_summary(report, audience) if graded else "",
        audience=audience,
        exercise=report.exercise,
        title=report.title or report.exercise,
        candidate=report.candidate,
        file=report.environment.submission_path or report.environment.submission_name,
        graded=graded,
        not_graded_reason=(report.not_graded_reason or "no reason recorded") if not graded else "",
        not_graded_detail=(report.not_graded_detail or "") if not graded and audience == "panel" else "",
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
        warnings=[w.message for w in report.warnings],
        environment=_environment_rows(report),
        started_at=report.started_at,
        duration=f"{report.duration_s:.0f} s" if report.audience == "candidate" else f"{report.duration_s:.1f} s",
        timing=timing,
        late=late,
        late_note=late_note,
    )


