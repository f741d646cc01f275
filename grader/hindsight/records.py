"""An exercise's record of its named mistakes: ``exercises/<name>/mistakes.json``.

Each mutant's *signature* (the checks it loses points on, as ``grader validate`` learns) lets a grading
name the mistake a candidate most likely made (:mod:`grader.hindsight.diagnosis`) without grading any
mutant. A signature holds only for what it was measured on, so the record carries the exercise's
fingerprint and the reference's and mutants' sha256; grading trusts it only while the fingerprint
matches. Signatures are kept per flavour (``cpu``, ``cuda``). The record names hidden checks, so it is
judge-side, never in a candidate's pack. See docs/decisions/stale-record-warning.md.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from grader.errors import ExerciseError, describe_invalid
from grader.hindsight.evidence import evidence_of, same_evidence
from grader.exercise import Exercise
from grader.reports.model import CheckResult, Report, Status
from grader.wire.grant import Flavor

#: The record's file name, in the exercise's folder.
RECORD_NAME = "mistakes.json"
#: 4: each lost check keeps its evidence (what its cases said, :mod:`grader.hindsight.evidence`). 3: signatures per
#: flavour (cpu, cuda). 2: each lost check says how it was lost. 1: only which checks, read as wrong answers.
#: Every older format still reads (as the cpu record), and names no mistake: it holds no evidence.
RECORD_VERSION = 4
#: The first format whose signatures say how each check was lost.
HOW_LOST_SINCE = 2
#: The first format whose signatures hold each lost check's evidence.
EVIDENCE_SINCE = 4


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Loss(str, Enum):
    """How a check was lost: a grading matches a mutant only on checks lost the same way."""

    FAILED = "failed"  # a wrong answer: an assertion about what came back failed
    ERROR = "error"  # the code raised (``Lost.detail``: the exception's class) or the sandbox crashed (no detail)
    TIMEOUT = "timeout"  # no answer came back in time
    FORBIDDEN = "forbidden"  # the judge took its credit for a forbidden API (``Lost.detail``: which)


#: When a parametrized check's cases were lost in several ways, the one its function is recorded with.
_PRECEDENCE = (Loss.FORBIDDEN, Loss.TIMEOUT, Loss.ERROR, Loss.FAILED)


class Lost(_Strict):
    """One check function lost, and how."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    how: Loss
    detail: str | None = Field(default=None, description="error: the exception class the code raised (none: the "
                                                          "sandbox crashed); forbidden: the API, or several, sorted")
    evidence: list[str] | None = Field(default=None, description="what each lost case said, normalised "
                                                                 "(grader.hindsight.evidence); None: not recorded")

    def same_way(self, other: "Lost") -> bool:
        """Lost the same way: the same outcome, the same exception class (or crash) or forbidden API, and the same
        evidence (the same words, the same reported values); without evidence on either side, never."""
        return self.how is other.how and self.detail == other.detail and same_evidence(self.evidence, other.evidence)


class Signature(_Strict):
    """Which check functions a file loses points on, and how each was lost (what diagnosis matches).

    Kept as its own type so that a record can hold several (one per sandbox flavour, say) without the
    matching changing.
    """

    lost: dict[str, Lost] = Field(default_factory=dict, description="check function name -> how it was lost")

    @property
    def checks(self) -> set[str]:
        return set(self.lost)

    def within(self, counted: set[str]) -> "Signature":
        """Cut to the checks a grading counted (a GPU check skipped there says nothing)."""
        return Signature(lost={c: how for c, how in self.lost.items() if c in counted})

    def same_way(self, other: "Signature") -> int:
        """How many checks both lost, and lost the same way."""
        return sum(1 for c, how in self.lost.items() if c in other.lost and how.same_way(other.lost[c]))


class MutantSignature(_Strict):
    """One mutant as validate saw it: which checks it loses points on, and how."""

    name: str = Field(description="the file's stem, as verdicts and interview.toml name it")
    file: str = Field(description="where it is under solutions/<exercise>/, e.g. mutants/no_scaling.diff")
    held_in: bool = Field(description="from mutants/ (graded by CI); false: from more_mutants/")
    sha256: str = Field(description="of the mutant file as written (a patch: the .diff)")
    description: str = Field(description="the first paragraph of its 'Mutant:' header, without the label")
    signatures: dict[Flavor, Signature] = Field(
        description="per flavour (cpu: graded without a GPU, cuda: with one), the checks it loses points on and how")

    @model_validator(mode="before")
    @classmethod
    def _older_formats(cls, data):
        """Formats 1-2 kept one ``signature``, measured without a GPU: it is the cpu one. Format 1's signatures are
        sorted lists of check function names, every listed check read as a wrong answer."""
        if not isinstance(data, dict):
            return data
        if "signature" in data and "signatures" not in data:
            data = {k: v for k, v in data.items() if k != "signature"} | {"signatures": {"cpu": data["signature"]}}
        if isinstance(data.get("signatures"), dict):
            data = {**data, "signatures": {f: _format_1(v) for f, v in data["signatures"].items()}}
        return data

    def signature(self, flavor: Flavor) -> Signature | None:
        """The checks it loses points on (and how) when graded in ``flavor`` (None: not recorded for it)."""
        return self.signatures.get(flavor)


def _format_1(value):
    """A signature written before losses were told apart: every listed check read as a wrong answer."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return {"lost": {name: {"how": Loss.FAILED.value} for name in value}}
    return value


class MistakeRecord(_Strict):
    """What ``grader validate --record`` measured for one exercise."""

    schema_version: int = RECORD_VERSION
    exercise: str
    exercise_fingerprint: str = Field(description="Exercise.fingerprint when recorded")
    reference_sha256: str = Field(description="the reference solution, which patch mutants apply to")
    checks: dict[Flavor, list[str]] = Field(
        description="per flavour recorded, the check function names the reference was graded on (skipped ones left "
                    "out), in order")
    mutants: list[MutantSignature]

    @model_validator(mode="before")
    @classmethod
    def _schema_1_is_the_cpu_record(cls, data):
        if isinstance(data, dict) and isinstance(data.get("checks"), list):
            data = {**data, "checks": {"cpu": data["checks"]}}
        return data

    @model_validator(mode="after")
    def _every_mutant_has_every_flavour(self):
        for m in self.mutants:
            if set(m.signatures) != set(self.checks):
                raise ValueError(f"mutant {m.name} is recorded for {flavor_names(m.signatures)}, the record for "
                                 f"{flavor_names(self.checks)}: each flavour holds every mutant")
        return self

    @property
    def flavors(self) -> list[Flavor]:
        return sorted(self.checks, key=lambda f: f.value)

    def current_for(self, ex: Exercise) -> bool:
        """Whether the signatures were measured on this exercise's checks as they are now."""
        return self.exercise == ex.name and self.exercise_fingerprint == ex.fingerprint


def flavor_names(flavors) -> str:
    return ", ".join(sorted(f.value for f in flavors)) or "no flavour"


def flavor_of(report: Report) -> Flavor:
    """The flavour a grading is matched in: ``cuda`` when it was given GPUs (and, being graded, saw one)."""
    return Flavor.CUDA if report.environment.gpus else Flavor.CPU


def record_path(ex: Exercise) -> Path:
    return ex.root / RECORD_NAME


def load_record(ex: Exercise) -> MistakeRecord | None:
    """The exercise's record, or None when it has none; an ``ExerciseError`` naming the field when malformed."""
    path = record_path(ex)
    if not path.is_file():
        return None
    try:
        return MistakeRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as e:
        raise ExerciseError(describe_invalid(f"{path} is not a valid mistake record:", e, show_input=False),
                            hint="Write it again with `grader validate --more --record " + ex.name + "`.") from None


def how_lost(check: CheckResult, report: Report) -> Lost:
    """How one check was lost, from the report's typed fields (never its messages)."""
    if check.penalty == "forbidden":
        apis = check.forbidden or sorted({h.api for h in report.forbidden if h.how == "static"})
        return Lost(how=Loss.FORBIDDEN, detail=", ".join(sorted(set(apis))) or None)
    if check.status is Status.TIMEOUT:
        return Lost(how=Loss.TIMEOUT)
    if check.status is Status.ERROR:
        return Lost(how=Loss.ERROR, detail=check.raised)
    return Lost(how=Loss.FAILED)


def losses(report: Report) -> Signature:
    """The check functions ``report`` lost points on and how (a parametrized one: its cases' most telling loss,
    forbidden before timeout before error before a wrong answer), each with the evidence of its lost cases.
    Skipped checks and check errors count for nothing (a check error makes the grading not graded; it says
    nothing about the file)."""
    found: dict[str, list[CheckResult]] = {}
    for c in report.checks:
        if c.lost_points:
            found.setdefault(c.function, []).append(c)
    out = {}
    for name, cases in sorted(found.items()):
        how = min((how_lost(c, report) for c in cases), key=lambda w: _PRECEDENCE.index(w.how))
        out[name] = how.model_copy(update={"evidence": evidence_of(cases)})
    return Signature(lost=out)


def counted_checks(report: Report) -> list[str]:
    """The check functions ``report`` counted (ran and was not skipped), in order."""
    return list(dict.fromkeys(c.function for c in report.checks if c.status is not Status.SKIPPED))


