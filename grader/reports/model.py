"""The grading report: the single source every scorecard format is rendered from.

Plain data, like pytest's ``TestReport``: closed sets are Enums, and
``to_json`` / ``grader.reports.derived.report_from_json`` round-trip exactly, so a stored report can be
re-rendered or re-summarised without grading again. pydantic validates a report
read back from disk, so a hand-edited or truncated file fails with a message that
names the bad field instead of rendering nonsense; and what follows from the checks
(score, max score, flags) is recomputed on reading.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from grader.reports.tracebacks import Trace
from grader.reports.warning import ReportWarning, WarningCode, warnings_read
# What a report says the submission did outside the rules, re-exported: they were defined here.
from grader.reports.findings import (FINDING_LABELS, VIOLATION_LABELS, Finding, FindingKind,  # noqa: F401
                                     ForbiddenHit, Violation, ViolationCode)

SCHEMA_VERSION = 1

#: Candidate output kept per check, in characters; the rest is dropped, visibly.
OUTPUT_CAP = 4000
TRUNCATION_NOTE = "\n[... output truncated by the grader: {dropped} more characters not shown]"


class Status(str, Enum):
    PASSED = "passed"
    FAILED = "failed"  # the answer was wrong, or a forbidden API was used
    ERROR = "error"  # the submission raised, crashed, or broke the protocol
    TIMEOUT = "timeout"  # a call or the whole grading ran past its deadline
    SKIPPED = "skipped"  # not applicable here (e.g. a GPU check without a GPU); not counted
    #: The check's own code raised something that is not an assertion about the answer (a KeyError on a
    #: mistyped probe key, a TypeError in a helper): a bug in the grader's checks, never the candidate's
    #: failure. The grading is "not graded" (``Report.check_errors``) and ``grader validate`` fails.
    CHECK_ERROR = "check_error"


class Visibility(str, Enum):
    VISIBLE = "visible"  # a candidate sees the message, counterexample and hint
    HIDDEN = "hidden"  # a candidate sees the name, points and status only


def cap_text(text: str, limit: int = OUTPUT_CAP) -> tuple[str, bool]:
    """Return ``text`` cut to ``limit`` characters with a visible note, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    return text[:limit] + TRUNCATION_NOTE.format(dropped=len(text) - limit), True


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_enum_values=False)


def split_check_id(check_id: str) -> tuple[str, str | None]:
    """``("test_m.py::test_rows", "3-True")`` for ``test_m.py::test_rows[3-True]``; ``(check_id, None)`` unparametrized.

    The one reading of a check's id. The parameters start at the first ``[`` after the file
    part: pytest puts them last, and a class or function name cannot hold a ``[``.
    """
    start = check_id.find("[", max(check_id.find("::"), 0))
    if start < 0 or not check_id.endswith("]"):
        return check_id, None
    return check_id[:start], check_id[start + 1:-1]


def check_function(check_id: str) -> str:
    """``test_sdpa.py::test_rows[3-True]`` -> ``test_rows``: what mistake records and interview.toml name."""
    return split_check_id(check_id)[0].rsplit("::", 1)[-1]


class SkipReason(str, Enum):
    """Why the judge itself skipped a check (a check's own ``pytest.skip`` has none: its words are its own)."""

    NO_GPU = "no_gpu"  # a GPU check in a sandbox that sees no GPU (grader.backends.gpu.gpu_skip_reason)


class GuardReason(str, Enum):
    """Why the sandbox's runtime subset refused an operation (``grader.wire.guarded.REFUSALS`` by key)."""

    NAME = "name"  # a dunder off the list, frame internals, a dispatch switch, a computed forbidden name
    PRIVATE = "private"  # a private name of an object the candidate did not make
    MODULE = "module"  # a module, or a module's member, outside the exercise's subset
    VALUE = "value"  # a frame, code, a namespace, or what runs code or starts programs
    FORBIDDEN = "forbidden"  # a forbidden API reached under another name
    WRITE = "write"  # code the candidate did not write patched, or a namespace written into
    IMPORT = "import"  # an import outside the subset
    OPEN = "open"  # a file under /proc, /sys or /dev


class CheckResult(_Model):
    id: str = Field(description="pytest node id relative to checks/, e.g. test_sdpa.py::test_softmax")
    name: str = Field(description="first line of the check's docstring")
    status: Status
    score: float
    max_score: float
    visibility: Visibility
    message: str = ""
    said: str | None = Field(default=None, description="failed: the whole text of the assertion that failed it, "
                                                       "capped (the message is its first line): the values it "
                                                       "reports are the evidence diagnosis matches")
    details: str = ""
    counterexample: str | None = None
    hint: str | None = None
    forbidden: list[str] = Field(default_factory=list)
    tampered: list[str] = Field(default_factory=list,
                                description="what the sandbox's own nets saw changed under them during this check")
    guard_reason: GuardReason | None = Field(default=None, description="why the sandbox's runtime subset refused "
                                                                       "(None: it did not, or an older report)")
    guard_refused: bool = Field(default=False, description="the sandbox's subset guard refused a computed name or an "
                                                           "import during this check (a violation of the subset)")
    output: str = ""
    output_truncated: bool = False
    duration_s: float | None = Field(default=0.0, description="seconds the check took; None in a candidate's copy "
                                                               "of a hidden check (its timing could tell its inputs)")
    not_run: bool = Field(default=False, description="the candidate's logic never ran: the file does not import "
                                                     "(the cause is the report's load_error, told once)")
    raised: str | None = Field(default=None, description="status error: the class name of the exception the "
                                                         "candidate's code raised (None: the sandbox crashed or "
                                                         "broke the protocol); what diagnosis compares")
    gpu: bool = Field(default=False, description="marked gpu: it runs only where the sandbox sees a GPU, and is "
                                                 "skipped with the judge's reason elsewhere")
    penalty: Literal["forbidden", "tampering", "subset"] | None = Field(
        default=None, description="the judge's decision took this check's credit for a forbidden API, tampering or "
                                  "a subset violation seen at run time (grader.host.decision), whatever the check's "
                                  "own outcome was")
    check_error: str | None = Field(
        default=None, description="status failed: the check's own code raised this on the submission's answer and "
                                  "not on the exercise's reference, graded on that check in the same kind of "
                                  "sandbox (grader.host.arbitration): counted as the submission's failure")
    skipped_for: SkipReason | None = Field(
        default=None, description="status skipped by the judge itself, and why: what a candidate's copy decides by "
                                  "(None: a reason the check gave, or a report older than this field)")
    said_as: str | None = Field(default=None, description="failed: the class name of the assertion (AssertionError, "
                                                          "pytest's Failed): with `said`, a candidate's details")
    trace: Trace | None = Field(default=None, description="error: the traceback the sandbox sent, as data (details "
                                                          "is the panel's text of it); a candidate's copy shows "
                                                          "the submission's frames only (None: an older report)")
    probe: str | None = Field(default=None, description="the probe whose call or reply ended the check (a timeout, "
                                                        "a crash, a reply of the wrong shape): the panel's; "
                                                        "messages never name it")

    @property
    def function(self) -> str:
        """The check function's name (``test_rows`` for ``test_m.py::test_rows[3-True]``)."""
        return check_function(self.id)

    @property
    def counted(self) -> bool:
        """It counts toward the score: neither skipped nor a check error (which makes the grading not graded)."""
        return self.status not in (Status.SKIPPED, Status.CHECK_ERROR)

    @property
    def lost_points(self) -> bool:
        """It counted and scored below its worth: what catches a mutant, what a mistake's signature holds."""
        return self.counted and self.score < self.max_score


#: A check's message when the submission did not import: the cause is told once, in ``Report.load_error``.
NOT_RUN_MESSAGE = "not run: the file does not import"

#: Why no check ran, by ``LoadError.found``: the end of the scorecard's headline and of each check's message.
NOT_RUN_BECAUSE = {"source": "the file does not import", "sandbox": "the file does not import",
                   "stub": "the file is the exercise's stub, unchanged",
                   "subset": "the file leaves its exercise's language subset (the violations are listed with the "
                             "report)"}


def not_run_message(found: str) -> str:
    """Each check's message when no check ran for the reason ``found`` (told once, in ``Report.load_error``)."""
    return f"not run: {NOT_RUN_BECAUSE.get(found, 'the file was not graded')}"


class LoadError(_Model):
    """Why no check ran the candidate's logic: reported once, at the top, instead of once per check.

    ``found="source"``: the judge's own parse of the file failed (a syntax error), known before anything ran.
    ``found="sandbox"``: importing the file raised, crashed or ran past its deadline in the sandbox (a
    NameError at module level, a missing module, an import that never ends); the text came from the
    untrusted worker as data (``trace``), formatted by the judge with the candidate's own frames only.
    ``found="stub"``: the file is the exercise's stub byte for byte: nothing of the candidate's to run.
    The judge answers ``source`` and ``stub`` alone, without a sandbox (``grader.host.grading``).
    """

    found: Literal["source", "sandbox", "stub", "subset"]
    summary: str = Field(description="the exception, e.g. \"SyntaxError: '(' was never closed\"")
    line: int | None = Field(default=None, description="the line of the submission the error points at, where known")
    raised: str | None = Field(default=None, description="sandbox: the class name of the exception importing raised "
                                                         "(None: the import crashed the sandbox or never finished)")
    traceback: str = Field(default="", description="the candidate's frames of the import traceback")
    trace: Trace | None = Field(default=None, description="sandbox: the import's traceback as data, what "
                                                          "`traceback` is formatted from (None: an older report)")
    check: str | None = Field(default=None, description="the check whose first call imported the file (sandbox "
                                                        "only); when it is hidden, a candidate's copy withholds "
                                                        "the text, which could hold that check's inputs")

    @property
    def headline(self) -> str:
        """``does not import: RuntimeError at line 10``: a table cell's words (the summary is the whole story)."""
        if self.found != "sandbox":
            return self.summary
        what = self.raised or self.summary
        return f"does not import: {what}" + (f" at line {self.line}" if self.line is not None else "")


class Environment(_Model):
    submission_name: str = ""
    submission_path: str = Field(default="", description="the graded file where the user has it: the absolute "
                                 "path, or <candidate>/<exercise>/<file> in a batch's SUBMISSIONS folder; shown, never opened")
    submission_sha256: str = ""
    exercise_version: str = ""
    exercise_fingerprint: str = Field(default="", description="sha256 of exercise.toml, probes.py and checks/")
    sandbox: str = ""
    image: str | None = None
    image_id: str | None = None
    torch_version: str | None = Field(default=None, description="torch inside the sandbox")
    judge_torch_version: str | None = None
    python_version: str | None = None
    grader_version: str = ""
    limits: dict = Field(default_factory=dict)
    hypothesis_seed: int = 0
    gpus: str | None = None
    sandbox_gpus: int | None = Field(default=None, description="GPUs the sandbox's torch saw")
    cuda_version: str | None = Field(default=None, description="torch.version.cuda in the sandbox; None: a CPU build")
    oci_runtime: str | None = Field(default=None, description="runc or runsc (gVisor); None outside Docker")
    local_gpu_env: dict[str, str] | None = Field(
        default=None, description="local sandbox with a GPU: what its plan passed on to the worker (CUDA_VISIBLE_DEVICES, "
                                  "CUDA_DEVICE_ORDER, LD_LIBRARY_PATH); its memory limit was the resident-memory watchdog")


class Timing(_Model):
    """Timed mode (``grader start``): when the clock started and where this submission fell."""

    clock_started_at: str = Field(description="ISO 8601, UTC")
    limit_minutes: float
    elapsed_s: float
    over_limit: bool


class Diagnosis(_Model):
    """What a grading's lost checks say (``grader.hindsight.diagnosis``), in one of two kinds.

    ``mistake``: a named mistake whose recorded losses (which checks, and how each was lost) match this
    grading's; shown as "looks like: <description> (matches <matched> of <failed> failed checks)", or
    "lost checks" when not every loss was a wrong answer. ``outcome``: no mistake is named, and the losses
    were not wrong answers (timeouts, exceptions, a forbidden API): what happened, in the judge's words,
    e.g. "no named mistake: every lost check timed out (5 of 5)". For the panel; a candidate's copy keeps
    one only when ``candidate_visible`` (it says nothing their scorecard does not).
    """

    kind: Literal["mistake", "outcome"] = Field(default="mistake", description="older reports: mistake")
    mutant: str = Field(default="", description="the mutant's name (its file's stem in solutions/<exercise>/); "
                                                "empty for an outcome")
    description: str = Field(description="the mistake in the author's words, or what happened (an outcome)")
    matched: int = Field(description="lost checks of this grading the mutant loses the same way")
    failed: int = Field(description="checks this grading lost points on")
    signature: int = Field(description="checks the mutant loses points on (of those this grading counted)")
    candidate_visible: bool = Field(default=False, description="every check involved is visible and the exercise "
                                                               "allows candidates to see diagnoses")
    answers_only: bool = Field(default=True, description="every lost check was a wrong answer (status failed)")

    @property
    def line(self) -> str:
        if self.kind == "outcome":
            return f"no named mistake: {self.description}"
        what = "failed" if self.answers_only else "lost"
        return (f"looks like: {self.description.rstrip('.')} (matches {self.matched} of {self.failed} {what} "
                f"check{'s' if self.failed != 1 else ''})")


class FollowUp(_Model):
    """A question for the interview, from the exercise's guide (``grader.hindsight.interview``): panel only."""

    ask: str
    answer: str = Field(description="what a strong candidate says")
    because: str = Field(description="why it is suggested: 'check X failed', 'looks like mutant Y', 'everything passed'")


class Report(_Model):
    schema_version: int = SCHEMA_VERSION
    exercise: str
    title: str = ""
    candidate: str | None = Field(default=None, description="who submitted it, where known: a batch's folder name")
    graded: bool
    not_graded_reason: str | None = Field(default=None, description="why it was not graded, in one line: what "
                                                                    "anyone, the candidate included, may read")
    not_graded_detail: str | None = Field(default=None, description="the panel's: what the judge's log, the checks "
                                                                    "or the sandbox said about it; never in a "
                                                                    "candidate's copy")
    score: float = 0.0
    max_score: float = 0.0
    checks: list[CheckResult] = Field(default_factory=list)
    forbidden: list[ForbiddenHit] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list,
                                    description="tampering, dynamic access and private torch use (reports older "
                                                "than this field have none)")
    violations: list[Violation] = Field(default_factory=list,
                                        description="how the file leaves its exercise's language subset; any one "
                                                    "leaves every check not run (older reports have none)")
    warnings: list[ReportWarning] = Field(default_factory=list,
                                          description="each with its code (older reports have plain "
                                                      "strings, read as 'unclassified')")
    load_error: LoadError | None = Field(default=None, description="why no check ran: the file does not import, "
                                                                   "or is the untouched stub (reports older "
                                                                   "than this field have none)")
    untouched_stub: bool = Field(default=False, description="the file is the exercise's stub byte for byte: no check "
                                                            "ran and nothing of the candidate's was graded")
    diagnosis: list[Diagnosis] = Field(default_factory=list, description="the named mistakes this grading looks "
                                                                         "like, nearest first (older reports have none)")
    follow_ups: list[FollowUp] = Field(default_factory=list, description="interview questions for the panel; never "
                                                                         "in a candidate's copy")
    started_at: str = ""
    duration_s: float = 0.0
    environment: Environment = Field(default_factory=Environment)
    timing: Timing | None = None
    audience: Literal["panel", "candidate"] = Field(
        default="panel", description="'candidate': hidden checks' details were removed from this copy")

    _read_warnings = field_validator("warnings", mode="before")(warnings_read)

    @model_validator(mode="before")
    @classmethod
    def _one_line_reason(cls, data):
        return one_line_reason(data)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)

    def warned(self, code: WarningCode) -> list[ReportWarning]:
        """This report's warnings of kind ``code``, in order."""
        return [w for w in self.warnings if w.code is code]

    @property
    def check_errors(self) -> list[CheckResult]:
        """Checks whose own code raised (``Status.CHECK_ERROR``): while any is here the grading is not graded."""
        return [c for c in self.checks if c.status is Status.CHECK_ERROR]

    @property
    def broken_checks(self) -> list[CheckResult]:
        """Checks whose own code raised, on the reference too (``check_errors``) or on this answer only
        (``CheckResult.check_error``, counted as a failure): for an author, each is a check to fix."""
        return [c for c in self.checks if c.status is Status.CHECK_ERROR or c.check_error is not None]

    def counts(self) -> dict[Status, int]:
        """How many checks ended in each status (every status present, zero included)."""
        out = {s: 0 for s in Status}
        for c in self.checks:
            out[c.status] += 1
        return out


def total(checks: list[CheckResult]) -> tuple[float, float]:
    """Score and max score of ``checks``; skipped checks count toward neither (nor would a check error, which
    makes the grading not graded: see ``Report.check_errors``)."""
    counted = [c for c in checks if c.counted]
    return sum(c.score for c in counted), sum(c.max_score for c in counted)


def one_line_reason(data):
    """A report read or made with a reason of several lines (stored before ``not_graded_detail`` existed, when
    the panel's part followed the first line): the first line is the reason, the rest its detail. Reports made
    now say each apart, so what a candidate may read is decided by field, never by where a newline falls."""
    if isinstance(data, dict) and isinstance(data.get("not_graded_reason"), str) and "\n" in data["not_graded_reason"]:
        first, _, rest = data["not_graded_reason"].strip().partition("\n")
        detail = "\n".join(part for part in (rest.strip(), data.get("not_graded_detail") or "") if part)
        data = {**data, "not_graded_reason": first, "not_graded_detail": detail or None}
    return data
