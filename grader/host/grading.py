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
import os
import uuid
from collections.abc import Callable
from pathlib import Path

from grader import __version__
from grader.errors import InfraError, UsageError
from grader.exercise import Exercise, load_exercise, resolve_submission
from grader.host import arbitration, decision
from grader.host.check_scope import Checks, CheckScope
from grader.hindsight.annotate import Hindsight
from grader.host.source_check import audit_submission
from grader.subset.audit import SourceAudit, parse_only
from grader.host.runner import JudgeRun, grading_request, run_checks
from grader.reports.model import (CheckResult, Environment, LoadError, Report, Status, not_run_message,
                                  one_line_reason, split_check_id, total)
from grader.reports.warning import ReportWarning, WarningCode
from grader.backends.choice import SandboxChoice, choose_sandbox
from grader.backends.gpu import GpuPlan, gpu_request, plan_gpus, version_from_hello as _text
from grader.wire.events import JudgeEvent
from grader.wire.grant import GpuRequest
from grader.backends.oci_runtime import resolve_runtime
from grader.backends.staging import BENCH_UNGUARDED_ENV
from grader.untrusted import shown
from grader.userfile import Unreadable, read_user_file

#: On the scorecard of a file that is the exercise's stub, unchanged (``grader submit`` says more on the terminal).
UNTOUCHED_STUB = "the submission is the exercise's stub, unchanged: nothing written for it was graded"

#: A candidate's file larger than this is refused with a message, not graded.
MAX_SUBMISSION_BYTES = 1024 * 1024


def grade(exercise: str | Path | Exercise, submission: str | Path | None = None, *,
          sandbox: str | SandboxChoice = "docker", gpus: GpuRequest | None = None, seed: int | None = None,
          image: str | None = None, runtime: str | None = None, shown_path: str | None = None,
          on_event: Callable[[JudgeEvent], None] | None = None, fingerprint: str | None = None,
          given_as: str | None = None, answer_alone: bool = True, start_next: bool = False,
          checks: Checks = "all", solutions_dir: Path | None = None) -> Report:
    """``sandbox`` is a kind, ``"auto"`` (Docker when usable, else local with a note), or a choice
    already made (the CLI resolves once to print the note early). ``runtime`` is the Docker
    sandbox's OCI runtime (runc, runsc; default ``$GRADER_RUNTIME`` or runc). ``shown_path`` is how
    the scorecard names the file (default: its absolute path; a batch gives its place in SUBMISSIONS).
    ``on_event`` hears the judge's events while it runs (``grader.host.live``: a progress display).

    ``fingerprint``: the exercise the caller means (the catalog's, a batch driver's): an exercise
    whose files differ is refused before any check loads. ``given_as``: the file as the user named
    it, which a parse error names (default: ``shown_path``, else the file's name).
    ``answer_alone`` (default): a file that does not parse, or is the exercise's stub byte for byte,
    is answered by the judge alone, without a sandbox (:func:`alone_reason`); ``grader validate``
    turns it off, since grading the stub for real is how it proves the checks reject it.
    ``start_next``: a batch's grading: once this grading's sandbox is taken, the next one's is started
    (``grader.backends.prestart``), so it boots while this grading runs.
    ``checks``: ``"visible"`` runs the visible checks only (a practice run; ``grader.host.check_scope``).
    ``solutions_dir``: where the exercise's reference is (default: the catalog's), graded on a check whose own
    code raised to tell whose error it is (``grader.host.arbitration``)."""

    started_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    ex = exercise if isinstance(exercise, Exercise) else load_exercise(exercise)
    if fingerprint is not None and ex.fingerprint != fingerprint:
        raise ExerciseChanged(ex, fingerprint)
    scope = CheckScope.of(ex, checks)
    path = resolve_submission(ex, submission)
    source = read_submission(path)
    request, gpu_warning = gpu_request(ex.config.exercise.gpu, gpus)  # a usage error before anything is looked at
    seed = ex.config.checks.seed if seed is None else seed
    given_as = given_as or shown_path or path.name
    reason = alone_reason(ex, source, given_as=given_as) if answer_alone else None
    if reason is not None and request is None:
        return scope.narrow(answer_without_sandbox(ex, source, reason, path=path, shown_path=shown_path, seed=seed,
                                                   gpus=gpus, started_at=started_at, t0=t0))
    refusal: InfraError | None = None
    try:
        choice = sandbox if isinstance(sandbox, SandboxChoice) else choose_sandbox(sandbox, image=image, gpu=request)
        plan = _gpu_plan(ex, request, choice.kind, image)
    except InfraError as e:  # a GPU asked for and not to be had here: refused before grading, never dropped
        if not isinstance(sandbox, SandboxChoice):  # `auto` grades GPUs in Docker only
            sandbox = SandboxChoice("local" if sandbox == "local" else "docker")
        choice, plan, refusal = sandbox, GpuPlan(request), e
    if reason is not None and refusal is None:  # GPUs asked for and to be had: the answer is still the judge's alone
        return scope.narrow(answer_without_sandbox(ex, source, reason, path=path, shown_path=shown_path, seed=seed,
                                                   gpus=gpus, started_at=started_at, t0=t0))
    sandbox = choice.kind
    oci = resolve_runtime(runtime) if sandbox == "docker" else None  # a bad name fails before grading
    hindsight = Hindsight.load(ex)  # its mistake record and question bank: a malformed one fails here, not after

    # Each stage below returns a new report (as pytest makes a TestReport from an item and a call); none edits
    # the one it is given, so what a report says never depends on who held it last.
    untouched = is_untouched_stub(ex, source)
    warnings = _source_warnings(source)
    if untouched:
        warnings.append(ReportWarning(code=WarningCode.UNTOUCHED_STUB, message=UNTOUCHED_STUB))
    if choice.note:
        warnings.append(ReportWarning(code=WarningCode.SANDBOX_FALLBACK, message=choice.note))
    if gpu_warning:
        warnings.append(gpu_warning)
    if sandbox == "local":
        from grader.backends.local_backend import NOT_ISOLATED

        warnings.append(ReportWarning(code=WarningCode.NOT_ISOLATED, message=NOT_ISOLATED))
    if plan.local is not None:
        warnings.append(ReportWarning(code=WarningCode.LOCAL_GPU, message=plan.local.describe(ex.limits.memory_mb)))
    report = Report(exercise=ex.name, title=ex.title, graded=True, started_at=started_at, warnings=warnings,
                    untouched_stub=untouched,
                    environment=_environment(ex, path, source, shown_path=shown_path, sandbox=sandbox, seed=seed,
                                             gpus=gpus if plan.request else None, oci_runtime=oci,
                                             local_gpu_env=plan.local.env if plan.local else None))
    if refusal is not None:
        return scope.narrow(_timed(_not_graded(report, str(refusal) + (f" {refusal.hint}" if refusal.hint else "")), t0))
    # The trusted decision about what the source may run: made here, from the text, before it runs.
    audit = audit_submission(ex, source.decode("utf-8", "replace"))
    report = report.model_copy(update={"forbidden": list(audit.forbidden), "violations": list(audit.violations)})
    if audit.blocking and audit.parsed:  # outside the subset: the file never runs, the judge answers alone
        return scope.narrow(answer_without_sandbox(ex, source, decision.subset_load_error(audit), path=path,
                                                   shown_path=shown_path, seed=seed, gpus=gpus, started_at=started_at,
                                                   t0=t0, audit=audit))

    pre = _prestart(ex, sandbox, plan, image, oci, start_next)
    try:
        with tempfile.TemporaryDirectory(prefix="grader-submission-") as tmp:
            graded = Path(tmp) / path.name  # the bytes just hashed and scanned, not whatever the path holds by now
            graded.write_bytes(source)
            asked = grading_request(ex, graded, sandbox=sandbox, seed=seed,
                                    grading_id=pre.grading_id if pre else uuid.uuid4().hex[:12],
                                    gpus=gpus if plan.request else None, image=image, runtime=oci,
                                    local_gpu_env=plan.local.env if plan.local else None,
                                    prestarted=pre.handoff() if pre else None)
            run = run_checks(ex, asked, on_event=on_event, extra_args=scope.pytest_args)
    finally:
        if pre is not None:
            pre.discard()  # removed whatever the judge did (it removes what it took over itself)
    report = _fill(report, ex, run, audit, remember=scope.everything)
    if report.graded and report.check_errors:  # whose error: the reference's grading on those checks says
        report = arbitration.settle(report, ex, arbitration.reference_file(ex, solutions_dir), asked)
    return scope.narrow(_timed(hindsight.annotate(report, untouched_stub=report.untouched_stub), t0))


def _timed(report: Report, t0: float) -> Report:
    """``report`` with the grading's duration since ``t0``: its last stage."""
    return report.model_copy(update={"duration_s": round(time.perf_counter() - t0, 3)})


def _prestart(ex: Exercise, sandbox: str, plan: GpuPlan, image: str | None, runtime: str | None,
              start_next: bool):
    """A Docker grading without a GPU: its sandbox, started before the judge (``grader.backends.prestart``)."""
    if sandbox != "docker" or plan.request is not None:
        return None
    from grader.backends import prestart

    pre = prestart.take(ex, image=image, runtime=runtime)
    if start_next:
        prestart.start_next(ex, image=image, runtime=runtime)
    return pre


def _gpu_plan(ex: Exercise, request: GpuRequest | None, kind: str, image: str | None) -> GpuPlan:
    """The grading's GPU plan, from what the chosen sandbox can do here (measured only when a GPU is asked for)."""
    caps = None
    if request is not None:
        from grader.backends import gpu_probe

        caps = gpu_probe.measure_docker(image) if kind == "docker" else gpu_probe.local_capabilities()
    return plan_gpus(ex.config.exercise.gpu, request, caps)


class ExerciseChanged(UsageError):
    """The exercise loaded is not the one the caller means: its files differ from the catalog's (a node's
    copy, a folder edited since): refused before any of its checks load."""

    def __init__(self, ex: Exercise, expected: str):
        super().__init__(f"The exercise {ex.name!r} at {ex.root} differs from the catalog's: its fingerprint is "
                         f"{ex.fingerprint[:12]}, the catalog's {expected[:12]} (exercise.toml, probes.py or checks/ "
                         "differ). Not graded against it.",
                         hint="Grade where the exercise's files are the catalog's (the same checkout, at the same "
                              "commit, on every machine).")


def alone_reason(ex: Exercise, source: bytes, *, given_as: str) -> LoadError | None:
    """Why no check needs a sandbox for ``source``, when none does: the untouched stub (known by its bytes),
    or a file the judge cannot parse (Python's own message, naming the file as the user gave it)."""
    if is_untouched_stub(ex, source):
        return LoadError(found="stub", summary=UNTOUCHED_STUB)
    if not source.strip():
        return None  # an empty file is graded: its scorecard says it is empty, and the checks fail as they would
    audit = parse_only(source.decode("utf-8", "replace"), filename=given_as)
    return None if audit.parsed else audit.load_error


def answered_alone(ex: Exercise, source: bytes, *, given_as: str) -> bool:
    """Whether :func:`grade` will answer ``source`` without a sandbox (the stub, a parse error, a file outside the
    exercise's subset): a caller then has no sandbox to choose, no engine to ask."""
    if alone_reason(ex, source, given_as=given_as) is not None:
        return True
    return audit_submission(ex, source.decode("utf-8", "replace")).blocking


def answer_without_sandbox(ex: Exercise, source: bytes, reason: LoadError, *, path: Path, shown_path: str | None,
                           seed: int, gpus: GpuRequest | None, started_at: str, t0: float,
                           audit: SourceAudit | None = None) -> Report:
    """The judge's answer, alone: every check "not run", with ``reason`` said once, at the top.

    ``audit``: the source check that refused to run the file (it leaves the exercise's subset, or names a
    forbidden package): its violations and forbidden references go on the report, named with their lines.

    The checks are the exercise's as its judge collects them, from the catalog's cache (keyed by the
    fingerprint; collected once when it is cold), so the scorecard lists what a full grading would.
    A ``gpu`` check is skipped when no GPU was asked for, as a grading without one skips it. No
    candidate code runs, so no sandbox is opened: a broken file or the stub costs no container.
    """
    from grader.host.collected import CollectionFailed, cached_checks

    request, gpu_warning = gpu_request(ex.config.exercise.gpu, gpus)
    report = Report(exercise=ex.name, title=ex.title, graded=True, started_at=started_at, load_error=reason,
                    untouched_stub=reason.found == "stub", warnings=[gpu_warning] if gpu_warning else [],
                    environment=_environment(ex, path, source, shown_path=shown_path, sandbox="none", seed=seed,
                                             gpus=gpus if request else None, oci_runtime=None))
    try:
        specs = cached_checks(ex)
    except CollectionFailed as e:
        return _not_graded(report, f"the exercise's checks could not be collected: {e}")
    message = decision.not_run_reason(audit) if audit is not None else not_run_message(reason.found)
    checks = [CheckResult(id=s.id, name=s.name, max_score=s.points, visibility=s.visibility, score=0.0,
                          **({"status": Status.SKIPPED, "message": "not run: no GPU was asked for (--gpus)"}
                             if s.gpu and request is None else
                             {"status": Status.ERROR, "message": message, "not_run": True}))
              for s in specs]
    score, max_score = total(checks)  # no diagnosis, no follow-ups: nothing of theirs ran
    return _timed(report.model_copy(update={
        "checks": checks, "score": score, "max_score": max_score,
        **({"forbidden": list(audit.forbidden), "violations": list(audit.violations)} if audit is not None else {})}),
        t0)


def _environment(ex: Exercise, path: Path, source: bytes, *, shown_path: str | None, sandbox: str, seed: int,
                 gpus: GpuRequest | None, oci_runtime: str | None, local_gpu_env: dict | None = None) -> Environment:
    return Environment(
        submission_name=path.name, submission_path=shown_path or str(path.absolute()),
        submission_sha256=hashlib.sha256(source).hexdigest(), exercise_version=ex.version,
        exercise_fingerprint=ex.fingerprint, sandbox=sandbox, grader_version=__version__,
        limits=ex.limits.model_dump(), hypothesis_seed=seed, gpus=str(gpus) if gpus else None, oci_runtime=oci_runtime,
        local_gpu_env=local_gpu_env,
    )


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


def _source_warnings(source: bytes) -> list[ReportWarning]:
    if not source.strip():
        return [ReportWarning(code=WarningCode.EMPTY_FILE, message="the submission file is empty")]
    return []  # a file that does not parse is the report's load_error, told once (grader.host.decision)


def _fill(report: Report, ex: Exercise, run: JudgeRun, audit: SourceAudit, *, remember: bool = True) -> Report:
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
        return _not_graded(report, run.infra, run.infra_detail)
    if not run.collected:
        if run.timed_out:  # no check had begun: nothing of the candidate's was judged, the machine was slow
            return _not_graded(report, f"the grading ran past its {ex.limits.grading_timeout_s:g} s deadline before "
                                       "the judge had collected its checks (a busy machine?): rerun", _log_hint(run))
        return _not_graded(report, "the judge collected no checks", _log_hint(run))
    if remember:
        _remember_checks(ex, run.collected)
    checks = []
    for n, spec in enumerate(run.collected, 1):
        result = run.results.get(spec.id)
        if result is None:
            if not run.timed_out:  # the reason is for anyone; the check's id and the log are for the panel
                return _not_graded(report, f"the judge ended without an outcome for check {n} of {len(run.collected)}",
                                   "\n".join(filter(None, (spec.id, _log_hint(run)))))
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


def _not_graded(report: Report, reason: str, detail: str | None = None) -> Report:
    """``report`` not graded, for ``reason`` (one line, anyone's) and ``detail`` (the panel's): no score, no checks.
    A new report; ``report`` itself is left as it is."""
    said = one_line_reason({"not_graded_reason": reason, "not_graded_detail": detail})  # an exception's own lines
    return report.model_copy(update={**said, "graded": False, "score": 0.0, "max_score": 0.0, "checks": []})


def _log_hint(run: JudgeRun) -> str | None:
    """The judge log's last lines: the panel's detail (the log may quote a hidden check), capped."""
    tail = [line[:300] for line in run.log_tail.strip().splitlines()[-5:]]
    return ("judge log (end):\n" + "\n".join(tail)) if tail else None
