"""A check's outcome from what ended it: the judge's one rule for who is to blame.

``classify`` turns the exception a check ended with into its status, message and details: an
assertion about the candidate's answer (the ``expect_*`` helpers, ``candidate_raises``,
``assert_close``, an author's ``pytest.fail``) is **failed**; the candidate's code raising or the
sandbox giving no answer is **error**, a timeout **timeout**; anything else the check's own code
raised is **check_error**, the grader's bug, never the candidate's failure ("not graded";
``grader validate`` fails the exercise). In a hypothesis exception group, one such leaf makes it a check error.
"""

from __future__ import annotations

from typing import Sequence

import pytest

from grader.judge import counterexample
from grader.judge.calls import CandidateError, SandboxCrash, SandboxFailure, SandboxTimeout
from grader.judge.replies import ReplyMismatch
from grader.reports.model import NOT_RUN_MESSAGE, CheckResult, Status
from grader.backends.client import SandboxStartError
from grader.reports.tracebacks import format_trace, last_candidate_line
from grader.untrusted import without_ansi

#: A failed check's whole assertion text kept (``CheckResult.said``), in characters.
SAID_CAP = 1500


def root(exc):
    """The first leaf of an exception group (hypothesis reports several distinct failures as one), or the
    first leaf that is neither an assertion nor the candidate's or the sandbox's: one bug in the check's
    own code makes the check a check error, whatever else hypothesis found beside it."""
    leaves = list(_leaves(exc))
    broken = [e for e in leaves if not (is_assertion(e) or isinstance(e, (CandidateError, SandboxFailure,
                                                                          SandboxStartError)))]
    return (broken or leaves or [exc])[0]


def _leaves(exc):
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        for inner in exc.exceptions:
            yield from _leaves(inner)
    elif exc is not None:
        yield exc


def is_assertion(exc: BaseException | None) -> bool:
    """Whether ``exc`` is an assertion about the candidate's answer: the only way a check may fail.

    That is an ``AssertionError`` (what ``expect_*``, ``candidate_raises``, ``torch.testing.assert_close`` and a
    bare ``assert`` raise) or an author's explicit ``pytest.fail``. Anything else raised by judge code (a
    ``KeyError`` on a mistyped probe key, a ``TypeError`` in a helper) is a check error.
    """
    return isinstance(exc, (AssertionError, pytest.fail.Exception))


def raised_where(line: int | None, source_lines: Sequence[str]) -> str:
    """`` at line 14 (`assert smoothing < 1.0`)``: where in the submission an exception was raised, quoting the line
    from the judge's own read of the file (never the sandbox's traceback text); empty when no frame was the file's."""
    if line is None:
        return ""
    text = source_lines[line - 1].strip() if 0 < line <= len(source_lines) else ""
    quoted = f" (`{text[:117] + '...' if len(text) > 120 else text}`)" if text and "`" not in text else ""
    return f" at line {line}{quoted}"


def classify(result: CheckResult, excinfo, report, source_lines: Sequence[str] = ()) -> None:
    """Set ``result``'s status, message and details from what ended the check; ``source_lines`` are the submission's
    lines as the judge read them, to quote the line an exception of the candidate's was raised at."""
    exc = root(excinfo.value) if excinfo is not None else None
    if isinstance(exc, (CandidateError, SandboxFailure)) and exc.during_import:
        # No example reached the candidate's logic: no counterexample, and the cause is told once (LoadError).
        result.status, result.message, result.not_run = Status.ERROR, NOT_RUN_MESSAGE, True
        return
    result.counterexample = counterexample.extract(excinfo.value if excinfo is not None else None)
    if isinstance(exc, (SandboxFailure, ReplyMismatch)):
        result.probe = exc.probe  # the panel's: the message never names a probe
    if isinstance(exc, SandboxTimeout):
        result.status, result.message = Status.TIMEOUT, str(exc)
    elif isinstance(exc, (SandboxFailure, SandboxStartError)):
        result.status, result.message = Status.ERROR, str(exc)
        if isinstance(exc, SandboxCrash):
            result.message += " (exit codes and printed text never count)"
    elif isinstance(exc, CandidateError):
        # An exception the check did not expect (one it expects is ``candidate_raises``'s assertion): the rule's
        # hint is about an answer that never came, so the scorecard says what raised and where instead.
        result.status, result.hint = Status.ERROR, None
        where = raised_where(last_candidate_line(exc.trace), source_lines)
        result.message = f"your code raised {exc.type_name}{where}" + (f": {exc.message}" if exc.message else "")
        result.details, result.trace = format_trace(exc.trace, candidate=False), exc.trace
        # A class name the sandbox sent: kept only when it is one (an identifier), as diagnosis compares it.
        result.raised = exc.type_name if exc.type_name.isidentifier() and len(exc.type_name) <= 100 else "Exception"
    elif is_assertion(exc):
        result.status = Status.FAILED
        text = str(exc)
        result.message = text.strip().splitlines()[0][:500] if text.strip() else type(exc).__name__
        result.said = text.strip()[:SAID_CAP] or None
        # Its class as pytest names it to a reader (an AssertionError subclass of ours reads as one).
        result.said_as = "Failed" if isinstance(exc, pytest.fail.Exception) else "AssertionError"
        result.details = report.longreprtext[-4000:]
    else:
        # Not an assertion about the answer: the check's own code (or a helper, or a fixture) broke. That is a
        # bug in the grader's checks, never the candidate's failure (the grading becomes "not graded").
        result.status = Status.CHECK_ERROR
        text = str(exc).strip().splitlines()[0][:300] if exc is not None and str(exc).strip() else ""
        what = type(exc).__name__ if exc is not None else "an error the judge could not read"
        result.message = f"the check's own code raised {what}" + (f": {text}" if text else "")
        result.details = report.longreprtext[-4000:]
    # Library text (a coloured torch or triton message) reads as words, not as escape codes.
    result.message, result.details = without_ansi(result.message), without_ansi(result.details)
