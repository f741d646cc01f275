"""An exercise's record of its named mistakes: ``exercises/<name>/mistakes.json``.

Each mutant in ``solutions/<name>/`` is a mistake with a name and a description, and
``grader validate`` already learns which checks each one fails. Written down with the
exercise, that pattern (the mutant's *signature*) lets a grading name the mistake a
candidate most likely made (:mod:`grader.judge.diagnosis`) without grading any mutant.

A signature is only true for the checks and mutants it was measured on, so the record
carries what it was measured against: the exercise's fingerprint (exercise.toml, probes,
checks), the reference's sha256 (patches apply to it) and each mutant file's sha256.
Grading trusts a record only while the fingerprint matches; a test keeps every stored
record current, and ``grader validate --record`` rewrites it.

The record lives beside the checks and, like them, is judge-side: it names hidden checks,
so it is never in a candidate's pack (``Exercise.public_files`` is an allowlist).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from grader.atomic import atomic_write
from grader.corpus import CorpusFile
from grader.errors import ExerciseError, describe_invalid
from grader.exercise import Exercise
from grader.reports.model import Report, Status

if TYPE_CHECKING:
    from grader.validation import ExerciseValidation

#: The record's file name, in the exercise's folder.
RECORD_NAME = "mistakes.json"
RECORD_VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MutantSignature(_Strict):
    """One mutant as validate saw it: which checks it loses points on."""

    name: str = Field(description="the file's stem, as verdicts and interview.toml name it")
    file: str = Field(description="where it is under solutions/<exercise>/, e.g. mutants/no_scaling.diff")
    held_in: bool = Field(description="from mutants/ (graded by CI); false: from more_mutants/")
    sha256: str = Field(description="of the mutant file as written (a patch: the .diff)")
    description: str = Field(description="the first paragraph of its 'Mutant:' header, without the label")
    signature: list[str] = Field(description="check function names it loses points on, sorted")


class MistakeRecord(_Strict):
    """What ``grader validate --record`` measured for one exercise."""

    schema_version: int = RECORD_VERSION
    exercise: str
    exercise_fingerprint: str = Field(description="Exercise.fingerprint when recorded")
    reference_sha256: str = Field(description="the reference solution, which patch mutants apply to")
    checks: list[str] = Field(description="the check function names the reference was graded on, in order")
    mutants: list[MutantSignature]

    def current_for(self, ex: Exercise) -> bool:
        """Whether the signatures were measured on this exercise's checks as they are now."""
        return self.exercise == ex.name and self.exercise_fingerprint == ex.fingerprint


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
        f.write(record.model_dump_json(indent=2) + "\n")
    return path


def check_function(check_id: str) -> str:
    """``test_sdpa.py::test_rows[3-True]`` -> ``test_rows``: what signatures and interview.toml name."""
    return check_id.split("[", 1)[0].rsplit("::", 1)[-1]


def lost_points(report: Report) -> list[str]:
    """The check functions ``report`` lost points on (skipped checks count for nothing), sorted:
    the same rule as ``ExerciseValidation.catches()``."""
    return sorted({check_function(c.id) for c in report.checks
                   if c.status is not Status.SKIPPED and c.score < c.max_score})


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


def mutant_signature(item: CorpusFile, report: Report) -> MutantSignature:
    return MutantSignature(name=item.name, file=f"{item.path.parent.name}/{item.path.name}",
                           held_in=item.path.parent.name == "mutants", sha256=sha256_file(item.path),
                           description=short_description(item.description(), item.name),
                           signature=lost_points(report))


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


def drift(record: MistakeRecord | None, observed: list[MutantSignature], *, name: str = "NAME") -> list[str]:
    """How what validate just observed differs from the stored record, one line each (empty: none).
    ``name`` is the exercise's: the command it suggests validates that one, not the whole catalog."""
    if record is None:
        return [f"no {RECORD_NAME}: run `grader validate {name} --more --record` to write one"] if observed else []
    recorded = {m.name: m for m in record.mutants}
    lines = []
    for m in observed:
        old = recorded.get(m.name)
        if old is None:
            lines.append(f"{m.name}: not in {RECORD_NAME}")
        elif old.signature != m.signature:
            gained, lost = sorted(set(m.signature) - set(old.signature)), sorted(set(old.signature) - set(m.signature))
            change = "; ".join(part for part in (f"now also fails {', '.join(gained)}" if gained else "",
                                                 f"no longer fails {', '.join(lost)}" if lost else "") if part)
            lines.append(f"{m.name}: signature differs from {RECORD_NAME}: {change}")
    return lines


def build_record(ex: Exercise, result: ExerciseValidation, reference: Path) -> MistakeRecord:
    """The record of ``result`` (one exercise's validation); ``RecordRefused`` saying why when its
    signatures cannot be trusted: the reference lost points, a mutant was not graded, or a patch did not apply."""
    ref = next((v for v in result.verdicts if v.kind == "reference"), None)
    if ref is None or not ref.ok:
        raise RecordRefused(f"the reference was not graded full marks ({ref.problem if ref else 'not graded'})")
    ungraded = [v.path.name for v in result.verdicts if v.kind == "mutant" and not v.report.graded]
    if ungraded:
        raise RecordRefused(f"not graded: {', '.join(ungraded)} (rerun)")
    if result.problems:
        raise RecordRefused("; ".join(result.problems))
    mutants = [mutant_signature(CorpusFile("mutant", v.path, reference), v.report)
               for v in result.verdicts if v.kind == "mutant"]
    return MistakeRecord(exercise=ex.name, exercise_fingerprint=ex.fingerprint, reference_sha256=sha256_file(reference),
                         checks=counted_checks(ref.report), mutants=mutants)


class RecordRefused(Exception):
    """Why a validation's signatures are not written down (the reason is printed; the old record stays)."""
