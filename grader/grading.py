"""Grade one submission: the function the CLI, the tests and the batch runner all call.

``grade()`` returns a ``Report`` or raises ``UsageError`` (bad exercise, missing
file) before anything runs. Infrastructure failures found while grading come
back as a report with ``graded=False`` and the reason, never as a score; the CLI
turns that into its own exit status.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from grader import __version__
from grader.errors import UsageError
from grader.exercise import Exercise, load_exercise, resolve_submission
from grader.judge import decision
from grader.judge.annotate import Hindsight
from grader.judge.audit import SourceAudit, audit_source
from grader.judge.live import JudgeEvent
from grader.judge.runner import JudgeRun, run_checks
from grader.reports.model import CheckResult, Environment, Report, Status, total
from grader.reports.redact import split_params
from grader.sandbox.choice import SandboxChoice, choose_sandbox
from grader.sandbox.flavor import flavor_for
from grader.sandbox.gpu import plan_gpus, version_from_hello as _text
from grader.sandbox.oci_runtime import resolve_runtime
from grader.untrusted import shown
from grader.userfile import Unreadable, read_user_file

#: On the scorecard of a file that is the exercise's stub, unchanged (``grader submit`` says more on the terminal).
UNTOUCHED_STUB = "the submission is the exercise's stub, unchanged: nothing written for it was graded"

#: A candidate's file larger than this is refused with a message, not graded.
MAX_SUBMISSION_BYTES = 1024 * 1024


def grade(exercise: str | Path | Exercise, submission: str | Path | None = None, *,
          sandbox: str | SandboxChoice = "docker", gpus: str | None = None, seed: int | None = None,
          image: str | None = None, runtime: str | None = None, shown_path: str | None = None,
          on_event: Callable[[JudgeEvent], None] | None = None) -> Report:
    """``sandbox`` is a kind, ``"auto"`` (Docker when usable, else local with a note), or a choice
    already made (the CLI resolves once to print the note early). ``runtime`` is the Docker
    sandbox's OCI runtime (runc, runsc; default ``$GRADER_RUNTIME`` or runc). ``shown_path`` is how
    the scorecard names the file (default: its absolute path; a batch gives its place in SUBMISSIONS).
    ``on_event`` hears the judge's events while it runs (``grader.judge.live``: a progress display)."""
    started_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    ex = exercise if isinstance(exercise, Exercise) else load_exercise(exercise)
    path = resolve_submission(ex, submission)
    source = read_submission(path)
    plan = plan_gpus(ex.config.exercise.gpu, gpus)
    seed = ex.config.checks.seed if seed is None else seed
    choice = sandbox if isinstance(sandbox, SandboxChoice) else choose_sandbox(
        sandbox, image=image, flavor=flavor_for(plan.request))
    sandbox = choice.kind
    oci = resolve_runtime(runtime) if sandbox == "docker" else None  # a bad name fails before grading
    hindsight = Hindsight.load(ex)  # its mistake record and question bank: a malformed one fails here, not after

    report = Report(exercise=ex.name, title=ex.title, graded=True, started_at=started_at)
    report.environment = Environment(
        submission_name=path.name, submission_path=shown_path or str(path.absolute()), submission_sha256=hashlib.sha256(source).hexdigest(),
        exercise_version=ex.version, exercise_fingerprint=ex.fingerprint, sandbox=sandbox, grader_version=__version__,
        limits=ex.limits.model_dump(), hypothesis_seed=seed, gpus=gpus if plan.request else None,
        oci_runtime=oci,
    )
    report.warnings += _source_warnings(source)
    if is_untouched_stub(ex, source):
        report.warnings.append(UNTOUCHED_STUB)
    if choice.note:
        report.warnings.append(choice.note)
    if plan.warning:
        report.warnings.append(plan.warning)
    if sandbox == "local":
        from grader.sandbox.local_backend import NOT_ISOLATED

        report.warnings.append(NOT_ISOLATED)
    # The trusted decision about what the source reaches for: made here, from the text, before it runs.
    audit = audit_source(source.decode("utf-8", "replace"), ex.config.forbidden,
                         filename=ex.config.exercise.submission)
    report.forbidden, report.findings = list(audit.forbidden), list(audit.findings)

    with tempfile.TemporaryDirectory(prefix="grader-submission-") as tmp:
        graded = Path(tmp) / path.name  # the bytes just hashed and scanned, not whatever the path holds by now
        graded.write_bytes(source)
        run = run_checks(ex, graded, sandbox=sandbox, seed=seed, grading_id=uuid.uuid4().hex[:12],
                         gpus=gpus if plan.request else None, image=image, runtime=oci, on_event=on_event)
    _fill(report, ex, run, audit)
    hindsight.annotate(report, untouched_stub=UNTOUCHED_STUB in report.warnings)
    report.duration_s = round(time.perf_counter() - t0, 3)
    return report


def read_submission(path: Path) -> bytes:
    """The submission's bytes, read as :func:`grader.userfile.read_user_file` reads any file handed to us
    (a regular file, not a link, size checked before reading); a ``UsageError`` saying why otherwise."""
    try:
        return read_user_file(path, limit=MAX_SUBMISSION_BYTES)
    except Unreadable as e:
        hint = "Submit the one source file the exercise asks for." if e.size is not None else None
        raise UsageError(f"Submission {shown(str(path), newlines=False)!r} {e.reason}.", hint=hint) from None


def is_untouched_stub(ex: Exercise, source: bytes) -> bool:
    """Whether ``source`` is the exercise's stub byte for byte: nothing of the candidate's was graded."""
    try:
        return ex.stub.read_bytes() == source
    except OSError:
        return False


def _source_warnings(source: bytes) -> list[str]:
    if not source.strip():
        return ["the submission file is empty"]
    return []  # a file that does not parse is the report's load_error, told once (grader.judge.decision)


def _fill(report: Report, ex: Exercise, run: JudgeRun, audit: SourceAudit) -> None:
    env = report.environment
    sandbox, hello = run.sandbox, run.sandbox.hello if run.sandbox is not None else None
    if sandbox is not None:
        env.image, env.image_id = sandbox.image, sandbox.image_id
    if hello is not None:  # validated where it arrived (grader.sandbox.selfreport); versions made printable
        env.torch_version, env.python_version = _text(hello.torch), _text(hello.python)
        env.cuda_version, env.sandbox_gpus = _text(hello.cuda_version), hello.gpus
    try:
        from importlib.metadata import version

        env.judge_torch_version = version("torch")
    except Exception:
        pass
    if env.sandbox == "local" and sandbox is not None:
        from grader.sandbox.local_backend import limit_warnings

        report.warnings += limit_warnings(sandbox.limits_unavailable, hello.rlimits_failed if hello else {})
    if sandbox is not None:
        report.warnings += sandbox.deadline_warnings  # deadlines measured by the wall clock, and why
    for api in hello.tripwire_missing if hello else []:
        report.warnings.append(f"forbidden API {api} does not exist in this torch; only the judge's source audit covers it")
    undocumented = dict.fromkeys(split_params(s.id)[0] for s in run.collected if not s.documented)
    for function in undocumented:  # named by function: a parametrized id would show a hidden check's inputs
        report.warnings.append(f"check {function} has no docstring; its name on the scorecard is made up")

    if run.infra is not None:
        _not_graded(report, run.infra)
        return
    if not run.collected:
        _not_graded(report, "the judge collected no checks" + _log_hint(run))
        return
    checks = []
    for n, spec in enumerate(run.collected, 1):
        result = run.results.get(spec.id)
        if result is None:
            if not run.timed_out:  # the first line is for anyone; the check's id and the log are for the panel
                _not_graded(report, f"the judge ended without an outcome for check {n} of {len(run.collected)}"
                                    f"\n{spec.id}" + _log_hint(run))
                return
            result = CheckResult(id=spec.id, name=spec.name, status=Status.TIMEOUT, score=0.0,
                                 max_score=spec.points, visibility=spec.visibility,
                                 message=f"the grading ran past its {ex.limits.grading_timeout_s:g} s deadline "
                                         "before this check finished")
        checks.append(result)
    report.checks = checks
    report.load_error = run.load_error
    decision.apply(report, audit, packages=set(hello.tripwire_modules if hello else []))
    report.score, report.max_score = total(checks)


def _not_graded(report: Report, reason: str) -> None:
    report.graded = False
    report.not_graded_reason = reason
    report.score = report.max_score = 0.0
    report.checks = []


def _log_hint(run: JudgeRun) -> str:
    """The judge log's last lines, below the reason: a candidate's copy keeps only the reason's first line
    (``redact.reason_line``), since the log may quote a hidden check."""
    tail = run.log_tail.strip().splitlines()[-5:]
    return ("\njudge log (end):\n" + "\n".join(tail)) if tail else ""
