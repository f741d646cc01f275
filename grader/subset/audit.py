"""The judge's subset check: the trusted decision about what a submission may run at all.

It parses the submission (never runs it) and checks it against its exercise's language
subset (``policy``): a module and member allowlist, builtins without ``exec``/``eval``/
``vars``..., dunders and frames out of reach, modules never used as values, ``getattr``
only ever called (``walk``, over the file's ``scopes``, resolving names with ``names``).
Inside the subset every route to a forbidden API is a visible spelling, found by path or
by attribute name (``rules``).

The result, a :class:`SourceAudit`:

- ``violations``: how the file leaves the subset. Any one, and the file never runs: the
  judge answers alone (``grader.host.grading.answer_without_sandbox``), every check not run;
- ``forbidden``: references to the exercise's forbidden APIs. The file runs, and
  ``grader.host.decision`` takes the credit the contract says; a forbidden *package*
  (calls into it cannot be told apart at run time) blocks like a violation.

What a computed name does at run time (``getattr(obj, name)``) is refused in the sandbox
by the guard the judge configures (``guard``, ``grader.sandbox.restricted``).
"""

from __future__ import annotations

import ast
import threading
import traceback
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, TypeAdapter

from grader.subset.config import ForbiddenConfig, SubsetConfig
from grader.subset.names import Names
from grader.subset.policy import Policy
from grader.subset.rules import ForbiddenRules
from grader.subset.scopes import Scopes
from grader.subset.walk import Walker
from grader.reports.model import ForbiddenHit, LoadError, Violation

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
    violations: list[Violation] = field(default_factory=list)
    #: Why the judge could not parse it (set when ``parsed`` is False): told once on the report.
    load_error: LoadError | None = None
    #: Forbidden APIs referenced here that are whole packages (no run can say which check used them).
    packages: list[str] = field(default_factory=list)
    #: (line, name) of each private attribute read from something other than ``self``, ``cls`` or ``super()``:
    #: where a runtime refusal of a private name can come from, told with it (``grader.host.decision``).
    private_reads: list[tuple[int, str]] = field(default_factory=list)

    @property
    def blocking(self) -> bool:
        """The file must not run: it does not parse, leaves the subset, or names a forbidden package."""
        return not self.parsed or bool(self.violations) or bool(self.packages)


def audit_source(source: str, forbidden: ForbiddenConfig | None = None, *, filename: str,
                 subset: SubsetConfig | None = None, own_names: frozenset[str] = frozenset()) -> SourceAudit:
    """Everything the source leaves the subset with, and every forbidden API it names. A file the judge
    cannot parse comes back ``parsed=False``: its import fails in the sandbox too, unless the two parsers
    disagree, which is not worth credit. ``own_names``: the names the exercise's stub defines
    (``rules.stub_names``), never taken for a forbidden kernel's name."""
    try:
        with _PARSE_LOCK:
            tree = ast.parse(source, filename=filename)
            scopes = Scopes(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        return SourceAudit(parsed=False, load_error=unparsable(e, filename))
    rules = ForbiddenRules.of(forbidden or ForbiddenConfig(), own_names)
    try:
        found = Walker(Names(scopes), Policy.of(subset), rules, filename).run(tree)
    except RecursionError as e:
        return SourceAudit(parsed=False, load_error=unparsable(e, filename))
    packages = sorted({h.api for h in found.forbidden if rules.is_package(h.api)})
    return SourceAudit(True, found.forbidden, found.violations, packages=packages, private_reads=private_reads(tree))


def private_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """Private attributes (``x._name``, not dunders) read from anything but ``self``, ``cls`` or ``super()``."""
    def own(node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and node.id in ("self", "cls") or isinstance(node, ast.Call) and \
            isinstance(node.func, ast.Name) and node.func.id == "super"

    found = {(n.lineno, n.attr) for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr.startswith("_")
             and not (n.attr.startswith("__") and n.attr.endswith("__")) and not own(n.value)}
    return sorted(found)


class AuditRequest(BaseModel):
    """Everything one audit reads, as plain data: what :func:`audit_exercise_file` hands to
    :func:`audit_source`, so the audit can run in another of the judge's processes
    (``grader.host.source_check``: the warm server's, where torch is imported already)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    filename: str
    forbidden: ForbiddenConfig
    subset: SubsetConfig | None = None
    own_names: tuple[str, ...] = ()

    def run(self) -> SourceAudit:
        return audit_source(self.source, self.forbidden, filename=self.filename, subset=self.subset,
                            own_names=frozenset(self.own_names))


#: A :class:`SourceAudit` to and from JSON (its parts are the report model's own types).
AUDIT_JSON = TypeAdapter(SourceAudit)


def exercise_audit_request(ex, source: str, *, filename: str | None = None) -> AuditRequest:
    """The audit a grading of ``source`` runs: under ``ex``'s own forbidden list, subset and stub names."""
    from grader.subset.rules import stub_names

    try:
        own = stub_names(ex.stub.read_text(encoding="utf-8"))
    except OSError:
        own = frozenset()
    return AuditRequest(source=source, filename=filename or ex.config.exercise.submission,
                        forbidden=ex.config.forbidden, subset=ex.config.subset, own_names=tuple(sorted(own)))


def audit_exercise_file(ex, source: str, *, filename: str | None = None) -> SourceAudit:
    """``audit_source`` under ``ex``'s own forbidden list, subset and stub names (what a grading uses)."""
    return exercise_audit_request(ex, source, filename=filename).run()


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
