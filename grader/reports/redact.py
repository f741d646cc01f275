"""A report as a candidate may keep it: hidden checks reduced to a safe name, points and status.

The one place a report is redacted: ``grader submit --json`` for candidates writes :func:`for_audience`'s
copy, and every scorecard is rendered from that copy, so no format shows what another withholds. A
hidden check's inputs can hide in its id, a forbidden hit, a "not graded" reason or its timing; each is
handled here, as are diagnoses naming hidden checks and interview follow-ups. Every word a candidate
reads is the judge's: the only sandbox text kept is what visible checks said. The copy says
``audience: candidate`` and redacting it again changes nothing. See docs/decisions/candidate-redaction.md.
"""

from __future__ import annotations

import hashlib

from grader.reports.findings import api_name
from grader.reports.model import CheckResult, LoadError, Report, SkipReason, Status, Visibility, split_check_id
from grader.reports.tracebacks import format_trace
from grader.untrusted import without_ansi

#: Fields of a hidden check that may carry its inputs, expected values or the candidate's output on them.
WITHHELD = {"message": "", "said": None, "details": "", "counterexample": None, "hint": None, "forbidden": [],
            "output": "", "output_truncated": False, "raised": None, "duration_s": None, "check_error": None,
            "said_as": None, "trace": None, "probe": None}

#: Fields of any check a candidate's copy drops: the sandbox's frames and the names of the grader's probes
#: are the panel's (a visible check's details are rebuilt from the first, by ``candidate_details``).
PANEL_ONLY = {"tampered": [], "trace": None, "probe": None}
#: What a check whose own code raised said, withheld from a candidate: its text is the grader's bug.
CHECK_TEXT = {"details": "", "said": None, "said_as": None}

#: How the judge words a GPU check skipped without a GPU (``grader.backends.gpu.gpu_skip_reason``), before its detail.
NO_GPU = "no GPU in the sandbox"

#: A check error's message as a candidate reads it: the judge's traceback is the panel's and the author's.
CHECK_ERROR_MESSAGE = "this check's own code raised an error: a bug in the grader, not in your code (nothing was scored)"
#: A check counted as failed because its own code raised on this answer only (grader.host.arbitration), as a
#: candidate reads it: what it raised is the panel's.
CHECK_COUNTED_MESSAGE = ("this check could not go on with your answer (its own code raised an error it does not "
                         "raise on the exercise's reference): counted as a failure")

#: What a candidate reads for tampering the sandbox's own nets reported in their words (reports made
#: before those nets were removed): the finding stands, its text is not the judge's.
SANDBOX_TAMPERING = "the sandbox reported tampering during a check"


def for_audience(report: Report, audience: str) -> Report:
    """``report`` itself for the panel; for a candidate, a copy with hidden checks' details withheld."""
    if audience == "panel" or report.audience == "candidate":
        return report
    names = candidate_names(report.checks)
    load_error = candidate_load_error(report.load_error, names)
    # A hidden check keeps "not run" unless the import failed in a hidden check (then its text is withheld too).
    not_run_shown = report.load_error is None or report.load_error.check not in names
    # A GPU check the judge skipped for want of a GPU keeps those words (not their detail, which quotes versions
    # the sandbox reported): decided before the check ran, they hold no input, and the headline says why those
    # points were not counted. Any other skip reason of a hidden check is withheld like its message.
    checks = [c.model_copy(update={**WITHHELD, "id": opaque_id(c.id), "name": names[c.id], "tampered": [],
                                   "not_run": c.not_run and not_run_shown,
                                   **({"message": NO_GPU} if c.status is Status.SKIPPED
                                      and c.skipped_for is SkipReason.NO_GPU else {})})
              if c.id in names
              else c.model_copy(update={**PANEL_ONLY, **CHECK_TEXT, "message": CHECK_ERROR_MESSAGE})
              if c.status is Status.CHECK_ERROR
              else c.model_copy(update={**PANEL_ONLY, **CHECK_TEXT, "message": CHECK_COUNTED_MESSAGE,
                                        "check_error": None})
              if c.check_error is not None
              else c.model_copy(update={**PANEL_ONLY, "details": candidate_details(c),
                                        "forbidden": [api_name(a) for a in c.forbidden]})
              for c in report.checks]
    # A runtime hit names the check it happened in by id; a hidden check's id can hold its inputs.
    forbidden = [h.model_copy(update={"api": api_name(h.api),
                                      **({"where": names[h.where], "check": names[h.where]} if h.where in names else {})})
                 for h in report.forbidden]
    findings = [f.model_copy(update={**({"where": names[f.where]} if f.where in names else {}),
                                     **({"what": SANDBOX_TAMPERING} if f.how == "runtime" else {})})
                for f in report.findings]
    violations = [v.model_copy(update={"check": names[v.check]}) if v.check in names else v for v in report.violations]
    return report.model_copy(update={"checks": checks, "forbidden": forbidden, "findings": findings,
                                     "violations": violations,
                                     "load_error": load_error, "follow_ups": [],
                                     "diagnosis": [d for d in report.diagnosis if d.candidate_visible],
                                     "audience": "candidate", "not_graded_detail": None,
                                     "duration_s": float(round(report.duration_s))})


#: What a candidate reads when their file first failed to import during a hidden check (every check
#: hidden, or a re-import after a restart).
WITHHELD_LOAD_ERROR = "the file failed to import during a hidden check; its text is withheld"


def candidate_load_error(error: LoadError | None, hidden: dict[str, str]) -> LoadError | None:
    """The load error as a candidate sees it. The import ran candidate code while a check's call was
    in the sandbox; when that check is hidden, what the code wrote could hold its inputs: withheld."""
    if error is None or error.check is None:
        return error
    if error.check in hidden:
        return LoadError(found=error.found, summary=WITHHELD_LOAD_ERROR)
    # The text is rebuilt from the frames as data; a report older than them shows none, rather than parse it.
    return error.model_copy(update={"check": None, "trace": None,
                                    "traceback": format_trace(error.trace, candidate=True) if error.trace else ""})


def opaque_id(check_id: str) -> str:
    """A hidden check's id as a candidate sees it: stable across attempts, but a parametrized
    id such as ``test_mask.py::test_rows[3-True]`` would show the inputs, so it is hashed."""
    return "hidden-" + hashlib.sha256(check_id.encode()).hexdigest()[:12]


def candidate_names(checks: list[CheckResult]) -> dict[str, str]:
    """Hidden check id -> the name a candidate sees: without its parameters, numbered per check function.

    The judge names a parametrized check ``"<name> [<params>]"``; a candidate gets
    ``"<name> [case 2]"`` instead, stable for as long as the exercise does not change.
    """
    names: dict[str, str] = {}
    cases: dict[str, int] = {}
    for c in checks:
        if c.visibility is not Visibility.HIDDEN:
            continue
        function, params = split_check_id(c.id)
        if params is None:
            names[c.id] = c.name
            continue
        cases[function] = cases.get(function, 0) + 1
        base = c.name.replace(f"[{params}]", "").strip() if params else c.name
        names[c.id] = f"{base} [case {cases[function]}]"
    return names


def candidate_details(check: CheckResult) -> str:
    """A visible check's details as a candidate sees them, from fields: what was wrong, not where in our code.

    A failed check's are the assertion the judge raised (its class, its whole text), never our frames. An
    error's are the traceback the sandbox sent, as data: only the submission's frames are shown. A report
    without those fields (older than them) shows none: withheld, never parsed out of the panel's text.
    """
    if check.status is Status.FAILED:
        return without_ansi(check.said_as + (f": {check.said}" if check.said else "")) if check.said_as else ""
    return format_trace(check.trace, candidate=True) if check.trace is not None else ""
