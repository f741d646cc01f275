"""Survivors an author has judged equivalent: the same behaviour as the reference, so no check can kill them.

Each exercise may keep ``solutions/<name>/equivalent_mutants.toml``: ``[[equivalent]]`` entries with the
mutant's ``id``, the reference's ``line`` it points at (stripped) and the ``reason`` a reviewer can
check. A survivor is then either killed by a new check or recorded here. When the reference changes, a
record whose id no longer makes a mutant, or whose line no longer reads as recorded, is reported stale
instead of silently excusing a different mutant. Judge side, never in a candidate's pack.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from grader.errors import ExerciseError, describe_invalid
from grader.mutation.generate import Generation

FILENAME = "equivalent_mutants.toml"


class Equivalent(BaseModel):
    """One recorded equivalent mutant."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, description="the mutant's id, as `grader validate --mutation` prints it")
    line: str = Field(min_length=1, description="the reference's line at the id, stripped")
    reason: str = Field(min_length=1, description="why it behaves as the reference does, for a reviewer")


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    equivalent: list[Equivalent] = Field(default_factory=list)


def load_equivalents(path: Path) -> list[Equivalent]:
    """The records in ``path`` (none when it does not exist); an ``ExerciseError`` naming the file and key when bad."""
    if not path.is_file():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ExerciseError(f"{path}: not valid TOML: {e}") from None
    try:
        records = _File.model_validate(data).equivalent
    except ValidationError as e:
        raise ExerciseError(describe_invalid(f"{path}: not a list of [[equivalent]] records", e)) from None
    seen: set[str] = set()
    for r in records:
        if r.id in seen:
            raise ExerciseError(f"{path}: {r.id} is recorded twice")
        seen.add(r.id)
    return records


@dataclass(frozen=True)
class Stale:
    """A record that no longer names the mutant it was written for: it excuses nothing until fixed."""

    id: str
    why: str

    def __str__(self) -> str:
        return f"{self.id}: stale, {self.why}"


def stale(records: list[Equivalent], generation: Generation) -> list[Stale]:
    """The records that no longer name the mutant they were written for, in the file's order."""
    made = {m.id: m for m in generation.mutants}
    dropped = {d.id: d.reason for d in generation.dropped}
    out = []
    for r in records:
        mutant = made.get(r.id)
        if mutant is None:
            why = f"dropped before grading ({dropped[r.id]})" if r.id in dropped else "no mutant has this id any more"
            out.append(Stale(r.id, why))
        elif mutant.line_text != r.line.strip():
            out.append(Stale(r.id, f"line {mutant.line} now reads {mutant.line_text!r}, recorded {r.line.strip()!r}"))
    return out
