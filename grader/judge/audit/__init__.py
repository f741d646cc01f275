"""The judge's source audit: the trusted decision about what a submission reaches for.

It parses the submission (never runs it), resolves every reference to torch and
its submodules to a dotted path (``names``), and records what the exercise
forbids and what no honest submission does (``rules``, walked by ``walk``):

- forbidden APIs, semantically: the public names in ``[forbidden] apis``, their
  re-exports, and the kernels behind them (``[forbidden] kernels``);
- tampering: the grader's or ``__main__``'s modules, ``sys.modules``, profilers
  and tracers, frames, ``gc``, ``ctypes``, ``exec``/``eval``, computed imports,
  torch's mode-stack switches; costs every check its credit;
- dynamic access to a module through a computed name, and private torch
  (``torch._C``, ``torch.ops``, ``torch._*``): flags for the panel.

``grader.judge.decision`` turns the result into credit. The sandbox's tripwire is
a second net that can only take credit away.
"""

from __future__ import annotations

import ast
import threading
import traceback
from dataclasses import dataclass, field

from grader.exercise import ForbiddenConfig
from grader.judge.audit.names import Names
from grader.judge.audit.rules import ForbiddenRules
from grader.judge.audit.walk import Walker
from grader.reports.model import Finding, ForbiddenHit, LoadError

#: CPython 3.11 keeps one AST-construction depth counter per interpreter: ``ast.parse`` in several
#: threads at once (batch and validate grade in threads) can fail with a spurious "AST constructor
#: recursion depth mismatch" SystemError when a garbage collection lets another thread in mid-parse
#: (seen here; python/cpython#106905 is a relative). Parsing one file takes a millisecond: one at a time.
_PARSE_LOCK = threading.Lock()


@dataclass
class SourceAudit:
    #: False when the judge could not parse the file: nothing in it can be vouched for.
    parsed: bool = True
    forbidden: list[ForbiddenHit] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    #: Why the judge could not parse it (set when ``parsed`` is False): told once on the report.
    load_error: LoadError | None = None


def audit_source(source: str, forbidden: ForbiddenConfig | None = None, *, filename: str) -> SourceAudit:
    """Everything the source reaches for. A file the judge cannot parse comes back ``parsed=False``:
    its import fails in the sandbox too, unless the two parsers disagree, which is not worth credit."""
    try:
        with _PARSE_LOCK:
            tree = ast.parse(source, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        return SourceAudit(parsed=False, load_error=unparsable(e, filename))
    walker = Walker(Names(tree), ForbiddenRules.of(forbidden or ForbiddenConfig()), filename)
    walker.visit(tree)
    return SourceAudit(True, walker.out.forbidden, walker.out.findings)


def parse_only(source: str, *, filename: str) -> SourceAudit:
    """Whether the judge can parse ``source`` at all, and Python's own message naming ``filename`` when not:
    what the judge needs to answer a broken file alone, before any audit or sandbox."""
    try:
        with _PARSE_LOCK:
            ast.parse(source, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        return SourceAudit(parsed=False, load_error=unparsable(e, filename))
    return SourceAudit()


def unparsable(error: BaseException, filename: str) -> LoadError:
    """The parse error as Python would print it (the file's line and a caret), from the judge's own parse."""
    if isinstance(error, SyntaxError):  # IndentationError and TabError too
        error.filename = filename
        text = "".join(traceback.format_exception_only(error)).rstrip("\n")
        return LoadError(found="source", summary=f"{type(error).__name__}: {error.msg}", line=error.lineno,
                         traceback=text)
    if isinstance(error, ValueError):  # e.g. a null byte in the source
        return LoadError(found="source", summary=f"the file cannot be read as Python source: {error}")
    return LoadError(found="source", summary=f"the file is nested too deeply to parse ({type(error).__name__})")
