"""The judge as a pytest plugin: checks are ordinary tests; this turns them into scored outcomes.

Load it with ``-p grader.judge.plugin``. It provides the ``sandbox`` fixture, the markers (``points``,
``visibility``, ``hint``, ``gpu``), hypothesis settings for grading, and one outcome per check, written
as JSON lines (``grader.wire.events``) to the request's events file as they happen. A grading is one
``GradingRequest`` (``grader.wire.request``) read from ``--grader-request FILE``; an author runs the
checks on any file with ``--grader-submission FILE`` instead (the local sandbox unless
``--grader-sandbox docker``), the same request made with the defaults.
"""

from __future__ import annotations

import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from grader.errors import GraderError
from grader.exercise import Exercise, GpuPolicy, load_exercise
from grader.judge import shrinking
from grader.judge.calls import GUARD_ERROR, CandidateError, CheckSandbox, SandboxFailure
from grader.judge.outcomes import classify, root
from grader.judge.specs import check_spec, visible_first
from grader.wire.events import (CheckFinished, Collected, Infra, JudgeEvent, JudgeFinished, LoadFailed, SandboxUsed,
                                 Started, event_line)
from grader.wire.request import GradingRequest
from grader.wire.spec import CheckSpec
from grader.reports.model import CheckResult, GuardReason, LoadError, SkipReason, Status, cap_text
from grader.reports.tracebacks import format_trace, last_candidate_line
from grader.backends.client import SandboxStartError
from grader.wire.selfreport import SandboxSummary
from grader.untrusted import without_ansi

if TYPE_CHECKING:
    from grader.backends.factory import SandboxInfo

MARKERS = [
    "points(n): points this check is worth (default 1)",
    "visibility(kind): 'visible' or 'hidden' (default from exercise.toml [checks] default_visibility)",
    "hint(text): shown to a candidate when this visible check fails",
    "gpu: needs a GPU in the sandbox; skipped with a reason without one (exercise gpu policy decides)",
]

def pytest_addoption(parser):
    group = parser.getgroup("grader", "grading a submission")
    group.addoption("--grader-request", help="the grading, as the host wrote it (a GradingRequest as JSON)")
    # An author's own run, without a request file: the same request, made from these and the defaults.
    group.addoption("--grader-submission", help="the file to grade (instead of --grader-request)")
    group.addoption("--grader-exercise", help="exercise folder (default: the folder above the checks)")
    group.addoption("--grader-sandbox", default="local", help="local (default; the worker in a subprocess, "
                     "not isolated) | docker")
    group.addoption("--grader-events", help="write one JSON line per event here")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """The exercise the judge is about to load is the one its caller fingerprinted, or nothing of it loads.

    This runs before pytest imports any ``conftest.py`` or check: the caller hashed the catalog's
    files, and a folder edited (or swapped) between that and this child re-reading them is refused
    here, with an "infra" event, so its code never runs in the judge.
    """
    request = _request(early_config.known_args_namespace)
    early_config.stash[_REQUEST] = request
    expected = request.fingerprint if request is not None else None
    if not expected:
        return
    actual = load_exercise(Path(request.exercise)).fingerprint
    if actual != expected:
        reason = (f"the exercise's files changed after it was loaded (fingerprint {expected[:12]}, now "
                  f"{(actual or 'unknown')[:12]}): not graded against them; rerun")
        if request.events:
            with open(request.events, "a", encoding="utf-8") as f:
                f.write(event_line(Infra(reason)))
        raise pytest.UsageError(reason)


#: The grading's request, read once from the command line (None: pytest runs the checks without grading).
_REQUEST = pytest.StashKey["GradingRequest | None"]()


def _request(options) -> GradingRequest | None:
    """The request from ``--grader-request`` (validated here, once), or made from an author's shorthand."""
    given = getattr(options, "grader_request", None)
    if given:
        try:
            return GradingRequest.read(given)
        except (OSError, ValueError) as e:
            raise pytest.UsageError(f"--grader-request {given}: not a grading request ({type(e).__name__})") from None
    submission = getattr(options, "grader_submission", None)
    if not submission:
        return None
    return GradingRequest(exercise=getattr(options, "grader_exercise", None) or "", submission=submission,
                          sandbox=getattr(options, "grader_sandbox", None) or "local",
                          events=getattr(options, "grader_events", None))


def pytest_configure(config):
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    # Read in pytest_load_initial_conftests; a plugin registered after that (a test's own) reads it here.
    request = config.stash[_REQUEST] if _REQUEST in config.stash else _request(config.option)
    if request is not None:
        config.pluginmanager.register(GraderPlugin(config, request), "grader-judge")


def _infer_exercise(config, request: GradingRequest) -> Exercise:
    if request.exercise:
        return load_exercise(request.exercise)
    for arg in config.args:
        for folder in [Path(arg).resolve(), *Path(arg).resolve().parents]:
            if (folder / "exercise.toml").is_file():
                return load_exercise(folder)
    raise pytest.UsageError("--grader-exercise not given and no exercise.toml above the checks")


def importable(checks_dir: Path, shared: Path | None = None) -> None:
    """Let the checks import the modules beside them (``_<exercise>_helpers.py``) by their bare name,
    and the exercise's ``shared.py`` (code the probes use too) as ``shared``.

    The plugin does it, so that no exercise carries a ``conftest.py`` that only says so,
    and it holds in every pytest import mode (``importlib`` puts nothing on ``sys.path``).
    A judge is a process of its own per grading: one exercise's folder never reaches
    another's checks, and a helper named after its exercise cannot shadow a real module.
    ``shared.py`` is loaded from its file, never by putting the exercise's folder on
    ``sys.path``: that folder holds the stub, which the judge must never import.
    """
    folder = str(checks_dir.resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    # This exercise's shared.py, even where another's was imported before in the same process (tests).
    if shared is not None and getattr(sys.modules.get("shared"), "__file__", None) != str(shared.resolve()):
        import importlib.util

        spec = importlib.util.spec_from_file_location("shared", shared.resolve())
        module = importlib.util.module_from_spec(spec)
        sys.modules["shared"] = module
        spec.loader.exec_module(module)


class GraderPlugin:
    def __init__(self, config, request: GradingRequest):
        from hypothesis import HealthCheck, settings

        self.config = config
        self.request = request
        self.exercise = _infer_exercise(config, request)
        # Read (never run) by the judge: to quote the line a candidate's exception was raised at.
        try:
            self.source_lines = Path(request.submission).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            self.source_lines = []
        importable(self.exercise.checks_dir, self.exercise.shared)
        self.replies = None
        self.events_path = request.events
        self.specs: dict[str, CheckSpec] = {}
        self.phases: dict[str, dict] = {}
        self.current: CheckSandbox | None = None
        self.infra: str | None = None
        self.load_error: LoadError | None = None
        self.session = None
        # Health checks judge the author's strategies, never the candidate: a candidate
        # must not lose a point because a strategy filters too much or a call is slow.
        # The parent is hypothesis's own default, never the profile loaded now: with a CI variable in the
        # environment hypothesis loads its "ci" profile, whose derandomize=True would replace the exercise's
        # seed with one of its own, so the same file would meet other inputs on a CI runner than anywhere else.
        settings.register_profile(
            "grader", parent=settings.get_profile("default"), derandomize=False, deadline=None, database=None,
            print_blob=False, max_examples=self.exercise.config.checks.max_examples,
            suppress_health_check=list(HealthCheck), phases=shrinking.PHASES,
        )
        settings.load_profile("grader")
        shrinking.bound_shrinking()  # a failing check costs a fixed number of calls, not up to minutes

        from grader.backends.factory import open_sandbox

        self.gpus_requested = request.gpus is not None
        self._workdir = tempfile.TemporaryDirectory(prefix="grader-judge-")
        self.box = None
        self.sandbox_info: SandboxInfo | None = None
        if config.option.collectonly:
            return  # counting checks (`grader list`) runs no candidate code: no sandbox to open
        try:
            from grader.judge.replies import Replies

            self.replies = Replies.load(self.exercise.checks_dir)
        except Exception as e:  # the exercise's own file: like a check module that fails to load
            self._infra(f"the exercise's reply shapes (checks/replies.py) failed to load: {type(e).__name__}: {e}")
            return
        try:
            pre = request.prestarted
            self.box, self.sandbox_info = open_sandbox(
                request.sandbox, exercise=self.exercise, submission=Path(request.submission),
                workdir=Path(self._workdir.name), grading_id=request.grading_id or uuid.uuid4().hex[:12],
                gpu=request.gpus, image=request.image, runtime=request.runtime,
                prestarted=(pre.container, Path(pre.stage)) if pre is not None else None,
                local_gpu=_local_gpu(request, self.exercise) if request.gpus and request.sandbox == "local" else None)
            self.box.start_in_background()  # the container boots while pytest collects
        except GraderError as e:
            self._infra(str(e) + (f" {e.hint}" if e.hint else ""))
        except Exception as e:  # anything else while opening is infrastructure too, named
            self._infra(f"the sandbox could not be opened: {type(e).__name__}: {e}")

    # ------------------------------------------------------------ events

    def _emit(self, event: JudgeEvent) -> None:
        if self.events_path:
            with open(self.events_path, "a", encoding="utf-8") as f:
                f.write(event_line(event))

    def _infra(self, reason: str, detail: str | None = None) -> None:
        if self.infra is None:
            self.infra = reason
            self._emit(Infra(reason, detail))

    # ------------------------------------------------------------ collection

    def pytest_collectreport(self, report):
        if report.failed:  # the first line is the reason; the traceback under it is for the panel
            self._infra(f"the exercise's checks failed to load ({report.nodeid or 'checks'})",
                        report.longreprtext[-1500:])

    @pytest.hookimpl(trylast=True)  # after every other reordering (pytest's fixture grouping included)
    def pytest_collection_modifyitems(self, session, config, items):
        self.session = session
        default = self.exercise.config.checks.default_visibility
        unseeded = config.getoption("hypothesis_seed", None) is None
        for item in items:
            self.specs[item.nodeid] = check_spec(item, default)
            if unseeded and getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
                # An author's bare pytest run reproduces a grading: the exercise's seed, not a random one.
                from hypothesis import seed

                seed(self.exercise.config.checks.seed)(item.obj)
        # In the author's order, which the report keeps.
        self._emit(Collected(tuple(self.specs.values())))
        if self.infra is not None:
            items[:] = []  # nothing can be trusted: run no candidate code
            return
        if self.request.only is not None:
            wanted = set(self.request.only)
            items[:] = [i for i in items if i.nodeid in wanted]
        items[:] = visible_first(items, self.specs)

    # ------------------------------------------------------------ the fixture

    @pytest.fixture
    def sandbox(self):
        """The candidate's sandbox: ``sandbox.call("probe", *args, **kwargs)``."""
        if self.box is None:
            pytest.fail("the sandbox could not be opened", pytrace=False)
        self.current = CheckSandbox(self.box, self.replies)
        return self.current

    # ------------------------------------------------------------ running

    def pytest_runtest_logstart(self, nodeid, location):
        if nodeid in self.specs:
            self._emit(Started(nodeid))

    def pytest_runtest_setup(self, item):
        self.current = None
        gpu = item.get_closest_marker("gpu") is not None
        self.phases[item.nodeid] = {"start": time.perf_counter(), "gpu": gpu}
        policy = self.exercise.config.exercise.gpu
        # A GPU asked for, or needed, is checked before the first check that could use it: never a quiet skip.
        needs = gpu or policy is GpuPolicy.REQUIRED or self.gpus_requested
        if self.box is not None and needs:
            from grader.backends.gpu import gpu_skip_reason, version_from_hello as _text

            try:
                self.box.ensure_started()
                hello = self.box.hello  # validated when it arrived (grader.wire.selfreport)
                reason = gpu_skip_reason(policy, hello.gpus, requested=self.gpus_requested,
                                         cuda_version=_text(hello.cuda_version), torch_version=_text(hello.torch))
            except (GraderError, SandboxStartError) as e:
                self._infra(str(e), getattr(e, "detail", None))
                pytest.skip("not graded")
            if reason:
                self.phases[item.nodeid]["skipped_for"] = SkipReason.NO_GPU
                pytest.skip(reason)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        state = self.phases.setdefault(item.nodeid, {"start": time.perf_counter()})
        if report.when == "call" or (report.when == "setup" and not report.passed):
            state["report"] = report
            state["excinfo"] = call.excinfo
        return report

    def pytest_runtest_logfinish(self, nodeid, location):
        state = self.phases.pop(nodeid, {})
        spec = self.specs.get(nodeid)
        if spec is None:
            return
        record = self.current.record if self.current is not None else None
        self.current = None
        result = self._outcome(spec, state, record)
        result.duration_s = round(time.perf_counter() - state.get("start", time.perf_counter()), 4)
        self._emit(CheckFinished(result))
        if self.infra is not None:
            self.session.shouldstop = f"not graded: {self.infra}"

    def _outcome(self, spec: CheckSpec, state: dict, record) -> CheckResult:
        """The check's result, built once from what the sandbox recorded during it and how it ended."""
        seen: dict = {}
        if record is not None:
            text = "".join(record.output)
            if record.output_dropped:
                text += f"\n[... {record.output_dropped} more bytes dropped in the sandbox]"
            output, truncated = cap_text(text)
            seen = {"output": output, "output_truncated": truncated or record.output_dropped > 0,
                    "forbidden": self.exercise.config.forbidden.named(record.forbidden),
                    "guard_refused": record.guard_refused,
                    "guard_reason": GuardReason(record.guard_reason) if record.guard_reason else None}
        report, excinfo = state.get("report"), state.get("excinfo")
        if report is None:
            ended = {"status": Status.ERROR, "message": "the check produced no outcome"}
        elif report.skipped:
            ended = {"status": Status.SKIPPED, "message": _skip_reason(report), "skipped_for": state.get("skipped_for")}
        elif report.failed:
            ended = classify(excinfo, report, self.source_lines)
            exc = root(excinfo.value if excinfo else None)
            if isinstance(exc, SandboxStartError):
                self._infra(str(exc), getattr(exc, "detail", None))
            if ended.get("not_run") and self.load_error is None:
                self._note_load_error(exc, spec.id)
        else:
            ended = {"status": Status.PASSED}
        # Forbidden calls and tampering the sandbox saw are recorded, not scored here: the judge's
        # decision (grader.host.decision) weighs them with the source audit, for every check at once.
        fields = {"hint": spec.hint, **seen, **ended}
        return CheckResult(id=spec.id, name=spec.name, max_score=spec.points, visibility=spec.visibility,
                           gpu=bool(state.get("gpu")),
                           score=spec.points if fields["status"] is Status.PASSED else 0.0, **fields)

    def _note_load_error(self, exc: CandidateError | SandboxFailure, check: str) -> None:
        """The import's exception, told once for the report: the checks themselves just say "not run"."""
        if isinstance(exc, SandboxFailure):  # it never finished: hung past its deadline, or took the sandbox down
            self.load_error = LoadError(found="sandbox", summary=without_ansi(exc.import_summary())[:1000], check=check)
            self._emit(LoadFailed(self.load_error))
            return
        trace = exc.trace
        summary = without_ansi(f"{exc.type_name}: {exc.message}" if exc.message else exc.type_name)
        raised = exc.type_name if exc.type_name.isidentifier() and len(exc.type_name) <= 100 else "Exception"
        if exc.is_a(GUARD_ERROR):  # the judge's words, never the sandbox's (grader.host.decision)
            summary, trace, raised = "the sandbox's subset guard refused a name while the file was imported", None, None
        self.load_error = LoadError(found="sandbox", summary=summary[:1000], line=last_candidate_line(trace),
                                    raised=raised, traceback=format_trace(trace, candidate=True) if trace else "",
                                    trace=trace, check=check)
        self._emit(LoadFailed(self.load_error))

    def pytest_sessionfinish(self, session):
        if self.box is not None:
            info = self.sandbox_info
            summary = SandboxSummary(sandbox=info.sandbox, image=info.image, image_id=info.image_id,
                                     limits_unavailable=info.limits_unavailable, starts=getattr(self.box, "starts", 0),
                                     hello=getattr(self.box, "hello", None),
                                     deadline_warnings=getattr(self.box, "deadline_warnings", []))
            self._emit(SandboxUsed(summary))
            self.box.close()
        self._workdir.cleanup()
        self._emit(JudgeFinished())


def _local_gpu(request: GradingRequest, exercise: Exercise):
    """The local sandbox's GPU set-up: as the grading planned it (the request's ``local_gpu_env``), or, when it
    has none, planned here the same way (an ``InfraError`` when this machine cannot give a GPU)."""
    from grader.backends.gpu import LocalGpuSetup, plan_gpus

    if request.local_gpu_env is not None:
        return LocalGpuSetup(env=dict(request.local_gpu_env))
    from grader.backends.gpu_probe import local_capabilities

    return plan_gpus(exercise.config.exercise.gpu, request.gpus, local_capabilities()).local


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return "skipped"
