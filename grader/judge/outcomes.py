"""A check's outcome from what ended it: the judge's one rule for who is to blame.

``classify`` turns the exception a check ended with into its status, message and details: an
assertion about the candidate's answer (the ``expect_*`` helpers, ``candidate_raises``,
``assert_close``, an author's ``pytest.fail``) is **failed**; the candidate's code raising or the
sandbox giving no answer is **error**, a timeout **timeout**; anything else the check's own code
raised is **check_error**, the grader's bug, never the candidate's failure ("not graded";
``grader validate`` fails the exercise). In a hypothesis exception group, one such leaf makes it a check error.
"""

from __future__ import annotations

from typing import Any, Sequence

import pytest

from grader.judge import counterexample
from grader.judge.calls import CandidateError, SandboxCrash, SandboxFailure, SandboxTimeout
from grader.judge.replies import ReplyMismatch
from grader.reports.model import NOT_RUN_MESSAGE, Status
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


def classify(excinfo, report, source_lines: Sequence[str] = ()) -> dict[str, Any]:
    """How a check that did not pass ended, as the fields of its ``CheckResult`` (status, message, details, and
    what else the exception says): decided here from what ended it, set once where the result is made.
    ``source_lines`` are the submission's lines as the judge read them, to quote where the candidate's code raised."""
    exc = root(excinfo.value) if excinfo is not None else None
    if isinstance(exc, (CandidateError, SandboxFailure)) and exc.during_import:
        # No example reached the candidate's logic: no counterexample, and the cause is told once (LoadError).
        return {"status": Status.ERROR, "message": NOT_RUN_MESSAGE, "not_run": True}
    ended: dict[str, Any] = {"counterexample": counterexample.extract(excinfo.value if excinfo is not None else None)}
    if isinstance(exc, (SandboxFailure, ReplyMismatch)):
        ended["probe"] = exc.probe  # the panel's: the message never names a probe
    details = ""
    if isinstance(exc, SandboxTimeout):
        status, message = Status.TIMEOUT, str(exc)
    elif isinstance(exc, (SandboxFailure, SandboxStartError)):
        status, message = Status.ERROR, str(exc)
        if isinstance(exc, SandboxCrash):
            message += " (exit codes and printed text never count)"
    elif isinstance(exc, CandidateError):
        # An exception the check did not expect (one it expects is ``candidate_raises``'s assertion): the rule's
        # hint is about an answer that never came, so the scorecard says what raised and where instead.
        status = Status.ERROR
        where = raised_where(last_candidate_line(exc.trace), source_lines)
        message = f"your code raised {exc.type_name}{where}" + (f": {exc.message}" if exc.message else "")
        details = format_trace(exc.trace, candidate=False)
        # A class name the sandbox sent: kept only when it is one (an identifier), as diagnosis compares it.
        ended.update(hint=None, trace=exc.trace,
                     raised=exc.type_name if exc.type_name.isidentifier() and len(exc.type_name) <= 100 else "Exception")
    elif is_assertion(exc):
        status, text = Status.FAILED, str(exc)
        message = text.strip().splitlines()[0][:500] if text.strip() else type(exc).__name__
        details = report.longreprtext[-4000:]
        # Its class as pytest names it to a reader (an AssertionError subclass of ours reads as one).
        ended.update(said=text.strip()[:SAID_CAP] or None,
                     said_as="Failed" if isinstance(exc, pytest.fail.Exception) else "AssertionError")
    else:
        # Not an assertion about the answer: the check's own code (or a helper, or a fixture) broke. That is a
        # bug in the grader's checks, never the candidate's failure (the grading becomes "not graded").
        status = Status.CHECK_ERROR
        text = str(exc).strip().splitlines()[0][:300] if exc is not None and str(exc).strip() else ""
        what = type(exc).__name__ if exc is not None else "an error the judge could not read"
        message = f"the check's own code raised {what}" + (f": {text}" if text else "")
        details = report.longreprtext[-4000:]
    # Library text (a coloured torch or triton message) reads as words, not as escape codes.
    return {**ended, "status": status, "message": without_ansi(message), "details": without_ansi(details)}
