"""Writing an exercise's mistake record: what ``grader validate`` observed, compared or written down.

``grader validate --record`` builds a record from the corpus it just graded (the reference full
marks, every mutant graded, no check error) and keeps the other flavour's signatures where they
still hold; without ``--record`` it says how what it observed drifts from the stored record.
Reading a record for a grading is :mod:`grader.hindsight.records`.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Protocol, Sequence

from grader.atomic import atomic_write
from grader.corpus import CorpusFile
from grader.exercise import Exercise
from grader.hindsight.records import (EVIDENCE_SINCE, HOW_LOST_SINCE, RECORD_NAME, Lost, MistakeRecord,
                                      MutantSignature, Signature, counted_checks, flavor_names, losses, record_path)
from grader.reports.model import Report, Status
from grader.wire.grant import Flavor


class Graded(Protocol):
    """One file ``grader validate`` graded (``grader.host.validation.Verdict`` is one): what a record is built from."""

    kind: str  # reference | variant | stub | mutant
    path: Path
    report: Report
    problem: str | None  # None: as expected

    @property
    def ok(self) -> bool: ...


def record_command(ex_name: str, flavor: Flavor) -> str:
    """The command that writes ``flavor``'s record of an exercise."""
    return f"grader validate {ex_name} --more --record" + (" --gpus all" if flavor is Flavor.CUDA else "")


def write_record(ex: Exercise, record: MistakeRecord) -> Path:
    path = record_path(ex)
    with atomic_write(path) as f:
        f.write(record.model_dump_json(indent=2, exclude_none=True) + "\n")
    return path


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
        return [f"no {flavor.value} record in {RECORD_NAME} (it holds {flavor_names(record.checks)}): run "
                f"`{record_command(exercise, flavor)}` to write one"]
    recorded = {m.name: m for m in record.mutants}
    lines = [] if record.schema_version >= HOW_LOST_SINCE else [
        f"{RECORD_NAME} is format {record.schema_version}: it does not say how each check was lost (read as wrong "
        f"answers); write it again with `{record_command(exercise, flavor)}`"]
    if HOW_LOST_SINCE <= record.schema_version < EVIDENCE_SINCE:
        lines.append(f"{RECORD_NAME} is format {record.schema_version}: it holds no evidence of how each check failed, "
                     f"so gradings name no mistake from it; write it again with `{record_command(exercise, flavor)}`")
    evidence = record.schema_version >= EVIDENCE_SINCE
    where = f" ({flavor.value})" if flavor is not Flavor.CPU else ""
    for m in observed:
        old = recorded.get(m.name)
        new_sig = m.signature(flavor) or Signature()
        old_sig = old.signature(flavor) if old is not None else None
        if old is None:
            lines.append(f"{m.name}: not in {RECORD_NAME}")
        elif not _same_signature(new_sig, old_sig or Signature(), evidence):
            now, was = new_sig.lost, (old_sig or Signature()).lost
            gained, lost = sorted(now.keys() - was.keys()), sorted(was.keys() - now.keys())
            moved = [f"{c} ({_how(was[c])} -> {_how(now[c])})" for c in sorted(now.keys() & was.keys())
                     if not _same(now[c], was[c], evidence)]
            change = "; ".join(part for part in (f"now also fails {', '.join(gained)}" if gained else "",
                                                 f"no longer fails {', '.join(lost)}" if lost else "",
                                                 f"loses differently {', '.join(moved)}" if moved else "") if part)
            lines.append(f"{m.name}: signature differs from {RECORD_NAME}{where}: {change}")
    return lines


def _same(a: Lost, b: Lost, evidence: bool) -> bool:
    """Lost the same way; what the checks said compared only where both sides hold it."""
    if evidence and a.evidence is not None and b.evidence is not None:
        return a.same_way(b)
    return (a.how, a.detail) == (b.how, b.detail)


def _same_signature(a: Signature, b: Signature, evidence: bool) -> bool:
    return a.lost.keys() == b.lost.keys() and all(_same(x, b.lost[c], evidence) for c, x in a.lost.items())


def _how(lost: Lost) -> str:
    """``failed``, or ``failed: <its first case's evidence>`` where the record holds it (what moved)."""
    return lost.how.value + (f": {lost.evidence[0][:120]}" if lost.evidence else "")


def build_record(ex: Exercise, verdicts: Sequence[Graded], problems: Sequence[str], reference: Path,
                 flavor: Flavor = Flavor.CPU) -> MistakeRecord:
    """The record of one exercise's validation (its ``verdicts``, and the ``problems`` it found with the exercise
    itself), graded in ``flavor``; ``RecordRefused`` saying why when its signatures cannot be trusted: the
    reference lost points, a check raised an error of its own, a mutant was not graded, a patch did not apply,
    or (``cuda``) a check was skipped although GPUs were given."""
    ref = next((v for v in verdicts if v.kind == "reference"), None)
    if ref is None or not ref.ok:
        raise RecordRefused(f"the reference was not graded full marks ({ref.problem if ref else 'not graded'})")
    broken = [f"{v.path.name} ({', '.join(c.name for c in v.report.broken_checks)})" for v in verdicts
              if v.report.broken_checks]
    if broken:
        raise RecordRefused(f"check errors (a bug in the checks, not a signature): {', '.join(broken)}")
    ungraded = [v.path.name for v in verdicts if v.kind == "mutant" and not v.report.graded]
    if ungraded:
        raise RecordRefused(f"not graded: {', '.join(ungraded)} (rerun)")
    if problems:
        raise RecordRefused("; ".join(problems))
    skipped = sorted({v.path.name for v in verdicts if any(c.status is Status.SKIPPED for c in v.report.checks)})
    if flavor is Flavor.CUDA and skipped:
        raise RecordRefused(f"checks were skipped with GPUs given ({', '.join(skipped)}): a cuda record holds every check")
    mutants = [mutant_signature(CorpusFile("mutant", v.path, reference), v.report, flavor)
               for v in verdicts if v.kind == "mutant"]
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
        return fresh, [f"dropped the {flavor_names(others)} record ({why}): write it again with "
                       f"`{record_command(ex.name, others[0])}`"]
    before = {m.name: m for m in previous.mutants}
    mutants = [m.model_copy(update={"signatures": _in_order({**{f: before[m.name].signatures[f] for f in others},
                                                             **m.signatures})}) for m in fresh.mutants]
    checks = _in_order({**{f: previous.checks[f] for f in others}, **fresh.checks})
    return fresh.model_copy(update={"checks": checks, "mutants": mutants}), []


def _in_order(by_flavor: dict) -> dict:
    return {f: by_flavor[f] for f in sorted(by_flavor, key=lambda f: f.value)}
