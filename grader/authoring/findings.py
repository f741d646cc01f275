"""What an authoring rule reports: a typed finding naming the rule, the file, the line and the fix.

A rule is known by a stable id (``prompt-level``, ``contract-row``...), as a linter's
codes are: the id is what a test, a CI log or an author searching AUTHORING.md matches
on, never the message's words. Each rule belongs to one concern (one module of
:mod:`grader.authoring`) and has a severity: an error fails ``grader validate`` (exit 4)
and the repository's tests; a warning (a mistake record behind the files it was measured
on) is printed by ``grader validate`` and fails only under ``--strict`` and in the
repository's tests. :mod:`grader.authoring.records` says why.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path


class Concern(str, enum.Enum):
    """The modules of :mod:`grader.authoring`, one per thing an author gets right."""

    PROMPT = "prompt"  # README.md's shape and exercise.toml's description of it
    LAYOUT = "layout"  # the folders: reference, public example, each corpus file saying what it is
    COUNTS = "counts"  # how many variants and mutants
    SUBSET = "subset"  # the stub, examples and corpus against the exercise's language subset and forbidden APIs
    CHECKS = "checks"  # the checks' code: parses, fails by raising, never with `assert`
    NAN_SAFE = "nan-safe"  # the checks compare measured numbers only through the NaN-safe helpers
    CONTRACT = "contract"  # solutions/<name>/contract.toml: each rule of the prompt held by a check
    RECORDS = "records"  # mistakes.json measured on today's files
    INTERVIEW = "interview"  # interview.toml: spoken questions tied to checks and mutants that exist
    INSTRUMENTS = "instruments"  # probes measure out of the candidate's reach, and a mutant forges them
    REPLIES = "replies"  # checks/replies.py declares every probe's reply shape


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"


class Rule(str, enum.Enum):
    """Every authoring rule: its id, the concern it belongs to and its severity."""

    def __new__(cls, rule_id: str, concern: Concern, severity: Severity = Severity.ERROR):
        member = str.__new__(cls, rule_id)
        member._value_ = rule_id
        member.concern = concern
        member.severity = severity
        return member

    PROMPT_FILE = ("prompt-file", Concern.PROMPT)
    PROMPT_TITLE = ("prompt-title", Concern.PROMPT)
    PROMPT_FIRST_SECTION = ("prompt-first-section", Concern.PROMPT)
    PROMPT_API = ("prompt-api", Concern.PROMPT)
    PROMPT_LEVEL = ("prompt-level", Concern.PROMPT)
    PROMPT_SECTIONS = ("prompt-sections", Concern.PROMPT)
    PROMPT_SUBSET = ("prompt-subset", Concern.PROMPT)
    PROMPT_TOPICS = ("prompt-topics", Concern.PROMPT)

    LAYOUT_EXAMPLE = ("layout-example", Concern.LAYOUT)
    LAYOUT_REFERENCE = ("layout-reference", Concern.LAYOUT)
    LAYOUT_DESCRIPTION = ("layout-description", Concern.LAYOUT)
    LAYOUT_SOURCE = ("layout-source", Concern.LAYOUT)

    COUNT_VARIANTS = ("count-variants", Concern.COUNTS)
    COUNT_MUTANTS = ("count-mutants", Concern.COUNTS)

    SUBSET_STUB = ("subset-stub", Concern.SUBSET)
    SUBSET_EXAMPLE = ("subset-example", Concern.SUBSET)
    SUBSET_CORRECT = ("subset-correct", Concern.SUBSET)
    SUBSET_MUTANT = ("subset-mutant", Concern.SUBSET)

    CHECKS_PARSE = ("checks-parse", Concern.CHECKS)
    CHECKS_ASSERT = ("checks-assert", Concern.CHECKS)

    NAN_SAFE = ("nan-safe", Concern.NAN_SAFE)

    CONTRACT_TABLE = ("contract-table", Concern.CONTRACT)
    CONTRACT_QUOTE = ("contract-quote", Concern.CONTRACT)
    CONTRACT_VALUE = ("contract-value", Concern.CONTRACT)
    CONTRACT_CHECK = ("contract-check", Concern.CONTRACT)
    CONTRACT_ROW = ("contract-row", Concern.CONTRACT)
    CONTRACT_IDLE_CHECK = ("contract-idle-check", Concern.CONTRACT)

    RECORD_INVALID = ("record-invalid", Concern.RECORDS)
    RECORD_MISSING = ("record-missing", Concern.RECORDS, Severity.WARNING)
    RECORD_STALE = ("record-stale", Concern.RECORDS, Severity.WARNING)
    RECORD_FLAVOR = ("record-flavor", Concern.RECORDS, Severity.WARNING)

    GUIDE_MISSING = ("guide-missing", Concern.INTERVIEW)
    GUIDE_INVALID = ("guide-invalid", Concern.INTERVIEW)
    GUIDE_SIZE = ("guide-size", Concern.INTERVIEW)
    GUIDE_KINDS = ("guide-kinds", Concern.INTERVIEW)
    GUIDE_SPOKEN = ("guide-spoken", Concern.INTERVIEW)
    GUIDE_TIES = ("guide-ties", Concern.INTERVIEW)
    GUIDE_MUTANT_CHECK = ("guide-mutant-check", Concern.INTERVIEW)

    PROBE_INSTRUMENT = ("probe-instrument", Concern.INSTRUMENTS)
    PROBE_FORGER = ("probe-forger", Concern.INSTRUMENTS)

    REPLY_SHAPES = ("reply-shapes", Concern.REPLIES)

    #: A rule's own code raised on this folder: the grader's bug (or a folder no rule foresaw), never a pass.
    #: Reported by whichever concern's rule raised (``check_exercise`` runs rules by concern).
    RULE_CRASHED = ("rule-crashed", Concern.LAYOUT)


@dataclass(frozen=True)
class Finding:
    """One thing wrong with an exercise folder: which rule, where, and what to do about it.

    ``message`` names the problem and the fix in one or two sentences (hypothesis's way:
    the bad value, then what was expected). ``severity`` is the rule's, except where a
    rule knows its evidence is weak (a question checked against a stale mistake record).
    """

    rule: Rule
    file: Path
    message: str
    line: int | None = None
    severity: Severity | None = None

    def __post_init__(self):
        if self.severity is None:
            object.__setattr__(self, "severity", self.rule.severity)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def where(self, root: Path | None = None) -> str:
        """``file:line`` (``file`` relative to ``root`` when it lies under it)."""
        path = self.file
        if root is not None:
            try:
                path = path.relative_to(root)
            except ValueError:
                pass
        return f"{path.as_posix()}:{self.line}" if self.line is not None else path.as_posix()

    def format(self, root: Path | None = None) -> str:
        """One line: ``where: severity [rule] message``."""
        return f"{self.where(root)}: {self.severity.value} [{self.rule.value}] {self.message}"

    def __str__(self) -> str:
        return self.format()
