"""What a check sees when it calls the sandbox: a value, or an exception that says why not.

``CheckSandbox.call`` turns a ``CallResult`` into the probe's return value, or
raises: ``CandidateError`` when the candidate's code raised (a check may expect
that, see ``candidate_raises``), and a ``SandboxFailure`` subclass when there is
no answer at all. The plugin maps each to the check's status. Output, forbidden
API hits (indices into the exercise's list, which the plugin names) and timing of
every call are recorded for the check that made it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grader.backends.call_result import CallResult, Failure
from grader.wire.guarded import REFUSALS
from grader.wire.error_record import ErrorRecord, MalformedErrorRecord, read_error_record


class CandidateError(Exception):
    """The candidate's code raised inside the sandbox; carries the data the worker sent.

    ``error`` is an :class:`ErrorRecord`, or a dict a probe sent back (a check that
    re-raises what a probe caught): that is validated here, and a malformed one
    raises :class:`ProtocolViolation` instead, so the check fails with a message
    saying what was wrong, never with a ``KeyError``.
    """

    def __init__(self, probe: str, error: ErrorRecord | dict, *, during_import: bool = False):
        try:
            error = read_error_record(error)
        except MalformedErrorRecord as e:
            raise ProtocolViolation(str(e), probe=probe) from None
        self.probe = probe
        #: Raised while the worker imported the submission: no check can run its logic (see ``LoadError``).
        self.during_import = during_import
        self.record = error
        self.type_name: str = error.type
        self.qualnames: list[str] = list(error.qualnames)
        self.builtin: bool = error.builtin
        self.message: str = error.message
        self.trace = error.trace
        super().__init__(f"{self.type_name}: {self.message}" if self.message else self.type_name)

    def is_a(self, name: str) -> bool:
        """True when the candidate's exception is ``name`` or a subclass of it (by class name)."""
        return name in self.qualnames


class SandboxFailure(Exception):
    """No answer came back: the check cannot pass. Subclasses say why, each with its :class:`Failure` ``kind``,
    which is what code decides by (the message is for people).

    ``during_import``: the worker was still importing the submission (an import that hangs past the
    full call deadline, or kills the sandbox): no check can run the candidate's logic, so the plugin
    tells it once, as the file not importing, instead of once per check.
    ``cause``: the failure's particulars without its subject (``CallResult.failure_cause``), for telling it
    again in other words: a timeout's deadline and clock figures, a crash's end; "" when there are none.
    ``probe``: the probe whose call it was (the panel's ``CheckResult.probe``); the message never names it.
    """

    kind: Failure = Failure.PROTOCOL

    def __init__(self, message: str = "", *, during_import: bool = False, cause: str = "", probe: str | None = None):
        super().__init__(message)
        self.during_import = during_import
        self.cause = cause
        self.probe = probe

    def import_summary(self) -> str:
        """How the file's not importing is told once (``LoadError.summary``) when this ended the import: decided by
        ``kind``, worded from ``cause``, never read back out of the message."""
        if self.kind is Failure.TIMEOUT and self.cause:
            return f"it never finished importing (it ran past {self.cause})"
        if self.kind is Failure.CRASH and self.cause:
            return f"the sandbox died while importing it: {self.cause}"
        return str(self)

    def again(self) -> "SandboxFailure":
        """The same failure raised anew (a later call in a check whose sandbox was lost)."""
        return type(self)(str(self), during_import=self.during_import, cause=self.cause, probe=self.probe)


class SandboxTimeout(SandboxFailure):
    kind = Failure.TIMEOUT


class SandboxCrash(SandboxFailure):
    kind = Failure.CRASH


class ProtocolViolation(SandboxFailure):
    kind = Failure.PROTOCOL


class ResultTooLarge(SandboxFailure):
    """The check's results passed the exercise's ``result_mb``: the frame refused unread, the sandbox restarted."""

    kind = Failure.TOO_LARGE


#: The class name of the subset guard's refusal, as the worker's error record carries it.
GUARD_ERROR = "SubsetGuardRefused"

_FAILURES = {Failure.TIMEOUT: SandboxTimeout, Failure.CRASH: SandboxCrash, Failure.PROTOCOL: ProtocolViolation,
             Failure.TOO_LARGE: ResultTooLarge}


@dataclass
class CheckRecord:
    """Everything the sandbox said during one check."""

    output: list[str] = field(default_factory=list)
    output_dropped: int = 0
    #: Forbidden APIs called during the check, as indices into the exercise's ``[forbidden] apis``.
    forbidden: list[int] = field(default_factory=list)
    #: What the sandbox sent back during this check. The check's results together stay under the
    #: exercise's ``result_mb``: hypothesis keeps failing examples (and the tensors their tracebacks
    #: hold) until the check ends, so a per-call cap alone would not bound the judge's memory.
    received_bytes: int = 0
    #: A call ended in the subset guard's refusal (``grader.sandbox.restricted``): read from the error's type,
    #: never from its text, and told in the judge's own words (``grader.host.decision``); ``guard_reason`` is
    #: why, a key of ``grader.wire.guarded.REFUSALS`` named by the refusal's class (None: an older sandbox's).
    guard_refused: bool = False
    guard_reason: str | None = None
    #: Set after a timeout or crash: later calls in the same check fail the same way at
    #: once, so hypothesis does not replay and shrink a 20-second timeout dozens of times.
    lost: "SandboxFailure | None" = None

    def add(self, result: CallResult) -> None:
        if result.output:
            self.output.append(result.output)
        self.output_dropped += result.output_dropped
        self.received_bytes += result.received_bytes
        for index in result.forbidden:
            if index not in self.forbidden:
                self.forbidden.append(index)
        if result.error is not None and GUARD_ERROR in result.error.qualnames:
            self.guard_refused = True
            self.guard_reason = self.guard_reason or next(
                (kind for kind, name in REFUSALS.items() if name in result.error.qualnames), None)


class CheckSandbox:
    """The ``sandbox`` fixture: ``sandbox.call("probe", *args, **kwargs)``.

    ``replies``: the exercise's declared reply shapes (``grader.judge.replies``): every reply is checked against
    its probe's shape before the check gets it; one that does not fit fails the check (the submission's failure).
    """

    def __init__(self, sandbox, replies=None):
        self._sandbox = sandbox
        self._replies = replies
        self.record = CheckRecord()

    def call(self, probe: str, *args, **kwargs):
        """Run probe ``probe`` in the sandbox with plain-data arguments; return what it returned, once it fits the
        probe's declared shape."""
        lost = self.record.lost
        if lost is not None:
            raise lost.again()
        result = self._sandbox.call(probe, args, kwargs, already_bytes=self.record.received_bytes)
        self.record.add(result)
        if result.failure is not None:
            self.record.lost = _FAILURES[result.failure](result.failure_message, during_import=result.during_import,
                                                         cause=result.failure_cause, probe=probe)
            raise self.record.lost.again()
        if result.error is not None:
            raise CandidateError(probe, result.error, during_import=result.during_import)
        return result.value if self._replies is None else self._replies.check(probe, result.value)
