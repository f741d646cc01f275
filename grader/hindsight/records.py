"""An exercise's record of its named mistakes: ``exercises/<name>/mistakes.json``.

Each mutant in ``solutions/<name>/`` is a mistake with a name and a description, and
``grader validate`` already learns which checks each one fails. Written down with the
exercise, that pattern (the mutant's *signature*) lets a grading name the mistake a
candidate most likely made (:mod:`grader.hindsight.diagnosis`) without grading any mutant.

A signature is only true for the checks and mutants it was measured on, so the record
carries what it was measured against: the exercise's fingerprint (exercise.toml, probes,
checks), the reference's sha256 (patches apply to it) and each mutant file's sha256.
Grading trusts a record only while the fingerprint matches; a test keeps every stored
record current, and ``grader validate --record`` rewrites it.

Signatures are kept per *flavour*: ``cpu`` (graded without a GPU) and ``cuda`` (graded with
one, ``validate --gpus``). The checks a mutant fails differ between them (a CUDA check
catches mistakes no CPU check sees, and is skipped without a GPU), so a grading is matched
against the record of its own flavour only, and ``--record`` writes the flavour it graded,
keeping the other where it was measured on the same checks, reference and mutants. An
exercise whose gpu policy is ``required`` has a ``cuda`` record only. A record written
before flavours existed (schema 1: one ``signature`` per mutant) reads as its ``cpu`` record.

The record lives beside the checks and, like them, is judge-side: it names hidden checks,
so it is never in a candidate's pack (``Exercise.public_files`` is an allowlist).

The record lives beside the checks and, like them, is judge-side: it names hidden checks,
so it is never in a candidate's pack (``Exercise.public_files`` is an allowlist).
"""

from __future__ import annotations

import hashlib
import re
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from grader.atomic import atomic_write
from grader.corpus import CorpusFile
from grader.errors import ExerciseError, describe_invalid
from grader.exercise import Exercise
from grader.reports.model import CheckResult, Report, Status
from grader.wire.grant import Flavor

if TYPE_CHECKING:
    from grader.host.validation import ExerciseValidation

#: The record's file name, in the exercise's folder.
RECORD_NAME = "mistakes.json"
#: 3: signatures per flavour (cpu, cuda). 2: each lost check says how it was lost (issue 26).
#: 1: only which checks, read as wrong answers. Every older format still reads (as the cpu record).
RECORD_VERSION = 3
#: The first format whose signatures say how each check was lost.
HOW_LOST_SINCE = 2


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

    def same_way(self, other: "Lost") -> bool:
        """Lost the same way: the same outcome, and the same exception class (or crash) or forbidden API."""
        return self.how is other.how and self.detail == other.detail


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
                raise ValueError(f"mutant {m.name} is recorded for {_names(m.signatures)}, the record for "
                                 f"{_names(self.checks)}: each flavour holds every mutant")
        return self

    @property
    def flavors(self) -> list[Flavor]:
        return sorted(self.checks, key=lambda f: f.value)

    def current_for(self, ex: Exercise) -> bool:
        """Whether the signatures were measured on this exercise's checks as they are now."""
        return self.exercise == ex.name and self.exercise_fingerprint == ex.fingerprint


def _names(flavors) -> str:
    return ", ".join(sorted(f.value for f in flavors)) or "no flavour"


def flavor_of(report: Report) -> Flavor:
    """The flavour a grading is matched in: ``cuda`` when it was given GPUs (and, being graded, saw one)."""
    return Flavor.CUDA if report.environment.gpus else Flavor.CPU


def record_command(ex_name: str, flavor: Flavor) -> str:
    """The command that writes ``flavor``'s record of an exercise."""
    return f"grader validate {ex_name} --more --record" + (" --gpus all" if flavor is Flavor.CUDA else "")


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


def write_record(ex: Exercise, record: MistakeRecord) -> Path:
    path = record_path(ex)
    with atomic_write(path) as f:
        f.write(record.model_dump_json(indent=2, exclude_none=True) + "\n")
    return path


def check_function(check_id: str) -> str:
    """``test_sdpa.py::test_rows[3-True]`` -> ``test_rows``: what signatures and interview.toml name."""
    return check_id.split("[", 1)[0].rsplit("::", 1)[-1]


def lost_points(report: Report) -> list[str]:
    """The check functions ``report`` lost points on (skipped checks count for nothing), sorted:
    the same rule as ``ExerciseValidation.catches()``."""
    return sorted(losses(report).lost)


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
    forbidden before timeout before error before a wrong answer). Skipped checks and check errors count for
    nothing (a check error makes the grading not graded; it says nothing about the file)."""
    found: dict[str, list[Lost]] = {}
    for c in report.checks:
        if c.status not in (Status.SKIPPED, Status.CHECK_ERROR) and c.score < c.max_score:
            found.setdefault(check_function(c.id), []).append(how_lost(c, report))
    return Signature(lost={name: min(ways, key=lambda w: _PRECEDENCE.index(w.how))
                           for name, ways in sorted(found.items())})


def counted_checks(report: Report) -> list[str]:
    """The check functions ``report`` counted (ran and was not skipped), in order."""
    return list(dict.fromkeys(check_function(c.id) for c in report.checks if c.status is not Status.SKIPPED))


_LABEL = re.compile(r"^\s*mutant\s*:\s*", re.IGNORECASE)


def short_description(text: str | None, fallback: str) -> str:
    """The first paragraph of a mutant's header, on one line, without its ``Mutant:`` label."""
    first = re.split(r"\n\s*\n", (text or "").strip(), maxsplit=1)[0]
    line = " ".join(_LABEL.sub("", first).split())
    return line or fallback


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def mutant_signature(item: CorpusFile, report: Report, flavor: Flavor = Flavor.CPU) -> MutantSignature:
    return MutantSignature(name=item.name, file=f"{item.path.parent.name}/{item.path.name}",
                           held_in=item.path.parent.name == "mutants", sha256=sha256_file(item.path),
                           description=short_description(item.description(), item.name),
                           signatures={flavor: losses(report)})


def stale_files(record: MistakeRecord, ex: Exercise, items: list[CorpusFile]) -> list[str]:
    """What changed since the record was written, in words; empty when it is current.

    ``items`` is the exercise's whole corpus (``corpus(ex, more=True)``): the stored record
    covers mutants/ and more_mutants/, so a mutant on either side only is a change too.
    """
    out = []
    if record.exercise_fingerprint != ex.fingerprint:
        out.append("the exercise's checks, probes or exercise.toml changed")
    reference = items[0].path if items and items[0].kind == "reference" else None
    if reference is not None and reference.is_file() and sha256_file(reference) != record.reference_sha256:
        out.append(f"the reference {reference.name} changed")
    recorded = {m.file: m for m in record.mutants}
    on_disk = {f"{i.path.parent.name}/{i.path.name}": i for i in items if i.kind == "mutant"}
    for file, item in on_disk.items():
        if file not in recorded:
            out.append(f"{file} is not in the record")
        elif sha256_file(item.path) != recorded[file].sha256:
            out.append(f"{file} changed")
    return out + [f"{file} is in the record but not on disk" for file in recorded if file not in on_disk]


def drift(record: MistakeRecord | None, observed: list[MutantSignature], flavor: Flavor = Flavor.CPU, *,
          exercise: str = "NAME") -> list[str]:
    """How what validate just observed (graded in ``flavor``) differs from the stored record of that flavour,
    one line each (empty: none)."""
    if not observed:
        return []
    if record is None:
        return [f"no {RECORD_NAME}: run `{record_command(exercise, flavor)}` to write one"]
    if flavor not in record.checks:
        return [f"no {flavor.value} record in {RECORD_NAME} (it holds {_names(record.checks)}): run "
                f"`{record_command(exercise, flavor)}` to write one"]
    recorded = {m.name: m for m in record.mutants}
    lines = [] if record.schema_version >= HOW_LOST_SINCE else [
        f"{RECORD_NAME} is format {record.schema_version}: it does not say how each check was lost (read as wrong "
        f"answers); write it again with `{record_command(exercise, flavor)}`"]
    where = f" ({flavor.value})" if flavor is not Flavor.CPU else ""
    for m in observed:
        old = recorded.get(m.name)
        new_sig = m.signature(flavor) or Signature()
        old_sig = old.signature(flavor) if old is not None else None
        if old is None:
            lines.append(f"{m.name}: not in {RECORD_NAME}")
        elif old_sig != new_sig:
            now, was = new_sig.lost, (old_sig or Signature()).lost
            gained, lost = sorted(now.keys() - was.keys()), sorted(was.keys() - now.keys())
            moved = [f"{c} ({was[c].how.value} -> {now[c].how.value})" for c in sorted(now.keys() & was.keys())
                     if now[c] != was[c]]
            change = "; ".join(part for part in (f"now also fails {', '.join(gained)}" if gained else "",
                                                 f"no longer fails {', '.join(lost)}" if lost else "",
                                                 f"loses differently {', '.join(moved)}" if moved else "") if part)
            lines.append(f"{m.name}: signature differs from {RECORD_NAME}{where}: {change}")
    return lines


def build_record(ex: Exercise, result: ExerciseValidation, reference: Path,
                 flavor: Flavor = Flavor.CPU) -> MistakeRecord:
    """The record of ``result`` (one exercise's validation, graded in ``flavor``); ``RecordRefused`` saying why
    when its signatures cannot be trusted: the reference lost points, a check raised an error of its own, a
    mutant was not graded, a patch did not apply, or (``cuda``) a check was skipped although GPUs were given."""
    ref = next((v for v in result.verdicts if v.kind == "reference"), None)
    if ref is None or not ref.ok:
        raise RecordRefused(f"the reference was not graded full marks ({ref.problem if ref else 'not graded'})")
    broken = [f"{v.path.name} ({', '.join(c.name for c in v.report.check_errors)})" for v in result.verdicts
              if v.report.check_errors]
    if broken:
        raise RecordRefused(f"check errors (a bug in the checks, not a signature): {', '.join(broken)}")
    ungraded = [v.path.name for v in result.verdicts if v.kind == "mutant" and not v.report.graded]
    if ungraded:
        raise RecordRefused(f"not graded: {', '.join(ungraded)} (rerun)")
    if result.problems:
        raise RecordRefused("; ".join(result.problems))
    skipped = sorted({v.path.name for v in result.verdicts if any(c.status is Status.SKIPPED for c in v.report.checks)})
    if flavor is Flavor.CUDA and skipped:
        raise RecordRefused(f"checks were skipped with GPUs given ({', '.join(skipped)}): a cuda record holds every check")
    mutants = [mutant_signature(CorpusFile("mutant", v.path, reference), v.report, flavor)
               for v in result.verdicts if v.kind == "mutant"]
    return MistakeRecord(exercise=ex.name, exercise_fingerprint=ex.fingerprint, reference_sha256=sha256_file(reference),
                         checks={flavor: counted_checks(ref.report)}, mutants=mutants)


class RecordRefused(Exception):
    """Why a validation's signatures are not written down (the reason is printed; the old record stays)."""


def merge_record(fresh: MistakeRecord, previous: MistakeRecord | None, ex: Exercise,
                 items: list[CorpusFile]) -> tuple[MistakeRecord, list[str]]:
    """``fresh`` (one flavour, just measured) with the other flavours of ``previous`` that still hold: measured on
    today's checks, reference and mutants. Also what was dropped from ``previous``, in words."""
    if previous is None:
        return fresh, []
    (flavor,) = fresh.checks
    others = [f for f in previous.flavors if f is not flavor]
    if not others:
        return fresh, []
    stale = stale_files(previous, ex, items)
    kept_names = {m.name for m in fresh.mutants}
    if stale or {m.name for m in previous.mutants} != kept_names:
        why = "; ".join(stale) or "its mutants differ from those just graded"
        return fresh, [f"dropped the {_names(others)} record ({why}): write it again with "
                       f"`{record_command(ex.name, others[0])}`"]
    before = {m.name: m for m in previous.mutants}
    mutants = [m.model_copy(update={"signatures": _in_order({**{f: before[m.name].signatures[f] for f in others},
                                                             **m.signatures})}) for m in fresh.mutants]
    checks = _in_order({**{f: previous.checks[f] for f in others}, **fresh.checks})
    return fresh.model_copy(update={"checks": checks, "mutants": mutants}), []


def _in_order(by_flavor: dict) -> dict:
    return {f: by_flavor[f] for f in sorted(by_flavor, key=lambda f: f.value)}


class RecordRefused(Exception):
    """Why a validation's signatures are not written down (the reason is printed; the old record stays)."""
