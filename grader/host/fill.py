"""A report filled from the judge's run: the sandbox it used, each check's outcome, the judge's decision, or
"not graded" and why. The last stage of :func:`grader.host.grading.grade`; each function returns a new report and
leaves the one it is given as it is.
"""

from __future__ import annotations

import os

from grader.exercise import Exercise
from grader.host import decision
from grader.host.runner import JudgeRun
from grader.reports.model import CheckResult, Report, Status, one_line_reason, split_check_id, total
from grader.reports.warning import ReportWarning, WarningCode
from grader.backends.gpu import version_from_hello as _text
from grader.backends.staging import BENCH_UNGUARDED_ENV
from grader.subset.audit import SourceAudit


def fill(report: Report, ex: Exercise, run: JudgeRun, audit: SourceAudit, *, remember: bool = True) -> Report:
    """``report`` with what the judge's run found (the sandbox it used, the checks' outcomes, the judge's decision
    on them), or not graded and why: a new report; ``report`` itself is left as it is. ``remember``: the run
    collected every check, so the catalog's cache may keep them (a practice run collects the visible ones only)."""
    env = report.environment
    sandbox, hello = run.sandbox, run.sandbox.hello if run.sandbox is not None else None
    found: dict = {}
    if sandbox is not None:
        found.update(image=sandbox.image, image_id=sandbox.image_id)
    if hello is not None:  # validated where it arrived (grader.wire.selfreport); versions made printable
        found.update(torch_version=_text(hello.torch), python_version=_text(hello.python),
                     cuda_version=_text(hello.cuda_version), sandbox_gpus=hello.gpus)
    try:
        from importlib.metadata import version

        found["judge_torch_version"] = version("torch")
    except Exception:
        pass
    warnings = list(report.warnings)
    if env.sandbox == "local" and sandbox is not None:
        from grader.backends.local_backend import limit_warnings

        warnings += limit_warnings(sandbox.limits_unavailable, hello.rlimits_failed if hello else {})
    if sandbox is not None:
        # deadlines measured by the wall clock, and why
        warnings += [ReportWarning(code=WarningCode.WALL_CLOCK_DEADLINE, message=w) for w in sandbox.deadline_warnings]
    if os.environ.get(BENCH_UNGUARDED_ENV):
        warnings.append(ReportWarning(code=WarningCode.BENCH_UNGUARDED, message=(
            f"{BENCH_UNGUARDED_ENV} was set: the module ran as written, without the runtime subset's guards "
            "(a benchmark's grading, never one to keep)")))
    if hello is not None and not hello.no_exec:
        warnings.append(ReportWarning(code=WarningCode.PROGRAMS_NOT_SEALED, message=(
            "the sandbox could not refuse new programs (no seccomp filter on this platform or kernel): a program "
            "started from the sandbox would not have the exercise's forbidden APIs removed")))
    forbidden = ex.config.forbidden  # the sandbox reports forbidden APIs as indices: named from this list only
    for api in forbidden.named(hello.forbidden_missing if hello else []):
        warnings.append(ReportWarning(code=WarningCode.FORBIDDEN_API_ABSENT, message=f"forbidden API {api} does "
                                      "not exist in this torch; only the judge's source audit covers it"))
    undocumented = dict.fromkeys(split_check_id(s.id)[0] for s in run.collected if not s.documented)
    for function in undocumented:  # named by function: a parametrized id would show a hidden check's inputs
        warnings.append(ReportWarning(code=WarningCode.UNDOCUMENTED_CHECK,
                                      message=f"check {function} has no docstring; its name on the scorecard "
                                              "is made up"))
    report = report.model_copy(update={"environment": env.model_copy(update=found), "warnings": warnings})

    if run.infra is not None:
        return not_graded(report, run.infra, run.infra_detail)
    if not run.collected:
        if run.timed_out:  # no check had begun: nothing of the candidate's was judged, the machine was slow
            return not_graded(report, f"the grading ran past its {ex.limits.grading_timeout_s:g} s deadline before "
                                       "the judge had collected its checks (a busy machine?): rerun", log_hint(run))
        return not_graded(report, "the judge collected no checks", log_hint(run))
    if remember:
        _remember_checks(ex, run.collected)
    checks = []
    for n, spec in enumerate(run.collected, 1):
        result = run.results.get(spec.id)
        if result is None:
            if not run.timed_out:  # the reason is for anyone; the check's id and the log are for the panel
                return not_graded(report, f"the judge ended without an outcome for check {n} of {len(run.collected)}",
                                   "\n".join(filter(None, (spec.id, log_hint(run)))))
            result = CheckResult(id=spec.id, name=spec.name, status=Status.TIMEOUT, score=0.0,
                                 max_score=spec.points, visibility=spec.visibility,
                                 message=f"the grading ran past its {ex.limits.grading_timeout_s:g} s deadline "
                                         "before this check finished")
        checks.append(result)
    decided = decision.apply(report.model_copy(update={"checks": checks, "load_error": run.load_error}), audit)
    score, max_score = total(decided.checks)
    decided = decided.model_copy(update={"score": score, "max_score": max_score})
    return decided


def _remember_checks(ex: Exercise, specs) -> None:
    """Keep the checks this grading collected in the catalog's cache, for the judge's answers alone."""
    from grader.host.collected import remember_checks

    try:
        remember_checks(ex, specs)
    except OSError:
        pass  # a read-only data folder costs a later answer a collection, never this grading


def not_graded(report: Report, reason: str, detail: str | None = None) -> Report:
    """``report`` not graded, for ``reason`` (one line, anyone's) and ``detail`` (the panel's): no score, no checks.
    A new report; ``report`` itself is left as it is."""
    said = one_line_reason({"not_graded_reason": reason, "not_graded_detail": detail})  # an exception's own lines
    return report.model_copy(update={**said, "graded": False, "score": 0.0, "max_score": 0.0, "checks": []})


def log_hint(run: JudgeRun) -> str | None:
    """The judge log's last lines: the panel's detail (the log may quote a hidden check), capped."""
    tail = [line[:300] for line in run.log_tail.strip().splitlines()[-5:]]
    return ("judge log (end):\n" + "\n".join(tail)) if tail else None
