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
from dataclasses import dataclass
from pathlib import Path

from grader import __version__
from grader.errors import InfraError, UsageError
from grader.exercise import Exercise, load_exercise, resolve_submission
from grader.host import arbitration, decision
from grader.host.check_scope import Checks, CheckScope
from grader.host.fill import fill, not_graded
from grader.hindsight.annotate import Hindsight
from grader.host.source_check import audit_submission
from grader.subset.audit import SourceAudit, parse_only
from grader.host.runner import grading_request, run_checks
from grader.reports.model import CheckResult, Environment, LoadError, Report, Status, not_run_message, total
from grader.reports.warning import ReportWarning, WarningCode
from grader.backends.choice import SandboxChoice, choose_sandbox
from grader.backends.gpu import GpuPlan, gpu_request, plan_gpus
from grader.wire.events import JudgeEvent
from grader.wire.grant import GpuRequest
from grader.backends.oci_runtime import resolve_runtime
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
    code raised to tell whose error it is (``grader.host.arbitration``).

    Three stages: :func:`prepare` (everything decided before anything runs; usage errors here), the judge's answer
    alone where no candidate code needs to run, and :func:`run_and_fill`."""
    asked = prepare(exercise, submission, gpus=gpus, seed=seed, shown_path=shown_path, fingerprint=fingerprint,
                    given_as=given_as, answer_alone=answer_alone, checks=checks)
    if asked.alone is not None and asked.request is None:  # nothing to run, and no GPU to grant or refuse
        return asked.answered_alone()
    choice, plan, refusal = choose(asked, sandbox, image=image)
    if asked.alone is not None and refusal is None:  # GPUs asked for and to be had: the answer is still the judge's
        return asked.answered_alone()
    placed = place(asked, choice, plan, runtime=runtime)
    if refusal is not None:
        return asked.finish(not_graded(placed.report, str(refusal) + (f" {refusal.hint}" if refusal.hint else "")))
    audit = audit_submission(asked.ex, asked.source.decode("utf-8", "replace"))  # the trusted decision, from the text
    if audit.blocking and audit.parsed:  # outside the subset: the file never runs, the judge answers alone
        return asked.answered_alone(decision.subset_load_error(audit), audit)
    return run_and_fill(asked, placed, audit, image=image, on_event=on_event, start_next=start_next,
                        solutions_dir=solutions_dir)


@dataclass(frozen=True)
class Asked:
    """One grading as asked, read and checked before anything runs: the exercise, the file's bytes, the GPU
    request, the seed, and why the judge can answer alone (``alone``), if it can."""

    ex: Exercise
    scope: CheckScope
    path: Path
    source: bytes
    gpus: GpuRequest | None
    request: GpuRequest | None
    gpu_warning: ReportWarning | None
    seed: int
    shown_path: str | None
    alone: LoadError | None
    started_at: str
    t0: float

    def answered_alone(self, reason: LoadError | None = None, audit: SourceAudit | None = None) -> Report:
        """The judge's answer alone, for :attr:`alone` (or ``reason``, with the ``audit`` that refused the file)."""
        return self.scope.narrow(answer_without_sandbox(
            self.ex, self.source, reason or self.alone, path=self.path, shown_path=self.shown_path, seed=self.seed,
            gpus=self.gpus, started_at=self.started_at, t0=self.t0, audit=audit))

    def finish(self, report: Report) -> Report:
        """``report`` timed and cut to the checks asked for: what :func:`grade` returns."""
        return self.scope.narrow(_timed(report, self.t0))


def prepare(exercise: str | Path | Exercise, submission: str | Path | None, *, gpus: GpuRequest | None,
            seed: int | None, shown_path: str | None, fingerprint: str | None, given_as: str | None,
            answer_alone: bool, checks: Checks) -> Asked:
    """The grading as asked (see :func:`grade`'s parameters); a ``UsageError`` when it cannot be."""
    started_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    ex = exercise if isinstance(exercise, Exercise) else load_exercise(exercise)
    if fingerprint is not None and ex.fingerprint != fingerprint:
        raise ExerciseChanged(ex, fingerprint)
    scope = CheckScope.of(ex, checks)
    path = resolve_submission(ex, submission)
    source = read_submission(path)
    request, gpu_warning = gpu_request(ex.config.exercise.gpu, gpus)  # a usage error before anything is looked at
    given_as = given_as or shown_path or path.name
    return Asked(ex=ex, scope=scope, path=path, source=source, gpus=gpus, request=request, gpu_warning=gpu_warning,
                 seed=ex.config.checks.seed if seed is None else seed, shown_path=shown_path,
                 alone=alone_reason(ex, source, given_as=given_as) if answer_alone else None,
                 started_at=started_at, t0=t0)


def choose(asked: Asked, sandbox: str | SandboxChoice, *, image: str | None
           ) -> tuple[SandboxChoice, GpuPlan, InfraError | None]:
    """The sandbox for ``asked`` and its GPU plan, or (third) why the GPUs asked for are refused here."""
    try:
        choice = sandbox if isinstance(sandbox, SandboxChoice) else choose_sandbox(sandbox, image=image,
                                                                                   gpu=asked.request)
        return choice, _gpu_plan(asked.ex, asked.request, choice.kind, image), None
    except InfraError as e:  # a GPU asked for and not to be had here: refused before grading, never dropped
        # `auto` grades GPUs in Docker only
        choice = sandbox if isinstance(sandbox, SandboxChoice) else SandboxChoice(
            "local" if sandbox == "local" else "docker")
        return choice, GpuPlan(asked.request), e


@dataclass(frozen=True)
class Placed:
    """Where the grading runs (the sandbox chosen, its GPU plan, the OCI runtime), the report before any check,
    and the exercise's hindsight (its mistake record and question bank)."""

    choice: SandboxChoice
    plan: GpuPlan
    runtime: str | None
    report: Report
    hindsight: Hindsight


def place(asked: Asked, choice: SandboxChoice, plan: GpuPlan, *, runtime: str | None) -> Placed:
    """The report before any check (its warnings and environment) for ``asked`` graded in ``choice``."""
    ex, kind = asked.ex, choice.kind
    oci = resolve_runtime(runtime) if kind == "docker" else None  # a bad name fails before grading
    hindsight = Hindsight.load(ex)  # its mistake record and question bank: a malformed one fails here, not after
    untouched = is_untouched_stub(ex, asked.source)
    warnings = _source_warnings(asked.source)
    if untouched:
        warnings.append(ReportWarning(code=WarningCode.UNTOUCHED_STUB, message=UNTOUCHED_STUB))
    if choice.note:
        warnings.append(ReportWarning(code=WarningCode.SANDBOX_FALLBACK, message=choice.note))
    if asked.gpu_warning:
        warnings.append(asked.gpu_warning)
    if kind == "local":
        from grader.backends.local_backend import NOT_ISOLATED

        warnings.append(ReportWarning(code=WarningCode.NOT_ISOLATED, message=NOT_ISOLATED))
    if plan.local is not None:
        warnings.append(ReportWarning(code=WarningCode.LOCAL_GPU, message=plan.local.describe(ex.limits.memory_mb)))
    report = Report(exercise=ex.name, title=ex.title, graded=True, started_at=asked.started_at, warnings=warnings,
                    untouched_stub=untouched,
                    environment=_environment(ex, asked.path, asked.source, shown_path=asked.shown_path, sandbox=kind,
                                             seed=asked.seed, gpus=asked.gpus if plan.request else None,
                                             oci_runtime=oci, local_gpu_env=plan.local.env if plan.local else None))
    return Placed(choice, plan, oci, report, hindsight)


def run_and_fill(asked: Asked, placed: Placed, audit: SourceAudit, *, image: str | None, on_event: Callable[[JudgeEvent], None] | None,
                 start_next: bool, solutions_dir: Path | None) -> Report:
    """Run the checks on the bytes ``asked`` read (``audit``: what the judge found in them), fill the report from the judge's run, settle check errors
    against the reference, and annotate it (the mistake it looks like, what to ask)."""
    ex, plan, sandbox = asked.ex, placed.plan, placed.choice.kind
    pre = _prestart(ex, sandbox, plan, image, placed.runtime, start_next)
    try:
        with tempfile.TemporaryDirectory(prefix="grader-submission-") as tmp:
            graded = Path(tmp) / asked.path.name  # the bytes hashed and scanned, not whatever the path holds by now
            graded.write_bytes(asked.source)
            request = grading_request(ex, graded, sandbox=sandbox, seed=asked.seed,
                                      grading_id=pre.grading_id if pre else uuid.uuid4().hex[:12],
                                      gpus=asked.gpus if plan.request else None, image=image, runtime=placed.runtime,
                                      local_gpu_env=plan.local.env if plan.local else None,
                                      prestarted=pre.handoff() if pre else None)
            run = run_checks(ex, request, on_event=on_event, extra_args=asked.scope.pytest_args)
    finally:
        if pre is not None:
            pre.discard()  # removed whatever the judge did (it removes what it took over itself)
    report = placed.report.model_copy(update={"forbidden": list(audit.forbidden), "violations": list(audit.violations)})
    report = fill(report, ex, run, audit, remember=asked.scope.everything)
    if report.graded and report.check_errors:  # whose error: the reference's grading on those checks says
        report = arbitration.settle(report, ex, arbitration.reference_file(ex, solutions_dir), request)
    return asked.finish(placed.hindsight.annotate(report, untouched_stub=report.untouched_stub))


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
        return not_graded(report, f"the exercise's checks could not be collected: {e}")
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
