"""The judge child's events, typed: written by the plugin, parsed once for the runner and the live display alike.

The judge writes one JSON line per event to its events file (``grader.judge.plugin``): ``collected``,
``started``, ``result``, ``load_error``, ``sandbox``, ``infra`` (not graded) and ``finished``. Each
kind is one class of the union :data:`JudgeEvent`, ``"event"`` its discriminator; :func:`event_line`
writes one and :func:`parse_event` reads one back, validated. The host's runner (what scores) and the
live display (progress only) read the same parse, so they cannot disagree about what a line says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar, Union

from pydantic import ValidationError

from grader.errors import describe_invalid
from grader.reports.model import CheckResult, LoadError
from grader.wire.selfreport import SandboxSummary
from grader.wire.spec import CheckSpec


@dataclass(frozen=True)
class Collected:
    """Every check of the grading, in the author's order, known before any candidate code runs."""

    checks: tuple[CheckSpec, ...]
    kind: ClassVar[str] = "collected"

    def fields(self) -> dict:
        return {"checks": [s.model_dump(mode="json") for s in self.checks]}


@dataclass(frozen=True)
class Started:
    """A check begins (progress only; never scored)."""

    id: str
    kind: ClassVar[str] = "started"

    def fields(self) -> dict:
        return {"id": self.id}


@dataclass(frozen=True)
class CheckFinished:
    """One check's outcome, as the judge scored it."""

    result: CheckResult
    kind: ClassVar[str] = "result"

    id = property(lambda self: self.result.id)
    status = property(lambda self: self.result.status)

    def fields(self) -> dict:
        return self.result.model_dump(mode="json")


@dataclass(frozen=True)
class LoadFailed:
    """The submission raised while the sandbox imported it."""

    error: LoadError
    kind: ClassVar[str] = "load_error"

    def fields(self) -> dict:
        return self.error.model_dump(mode="json")


@dataclass(frozen=True)
class SandboxUsed:
    """The sandbox the checks ran in, and what it reported about itself."""

    summary: SandboxSummary
    kind: ClassVar[str] = "sandbox"

    def fields(self) -> dict:
        return self.summary.model_dump(mode="json")


@dataclass(frozen=True)
class Infra:
    """The grading cannot be trusted (infrastructure, not the candidate): not graded."""

    reason: str  # one line: anyone's
    detail: str | None = None  # the panel's (a traceback, the sandbox's own words)
    kind: ClassVar[str] = "infra"

    def fields(self) -> dict:
        return {"reason": self.reason, **({"detail": self.detail} if self.detail is not None else {})}


@dataclass(frozen=True)
class JudgeFinished:
    """The judge ended on its own (a judge killed half-way never writes it)."""

    kind: ClassVar[str] = "finished"

    def fields(self) -> dict:
        return {}


JudgeEvent = Union[Collected, Started, CheckFinished, LoadFailed, SandboxUsed, Infra, JudgeFinished]

_READERS = {
    Collected.kind: lambda d: Collected(tuple(CheckSpec.model_validate(c) for c in d["checks"])),
    Started.kind: lambda d: Started(str(d["id"])),
    CheckFinished.kind: lambda d: CheckFinished(CheckResult.model_validate(d)),
    LoadFailed.kind: lambda d: LoadFailed(LoadError.model_validate(d)),
    SandboxUsed.kind: lambda d: SandboxUsed(SandboxSummary.model_validate(d)),
    Infra.kind: lambda d: Infra(str(d["reason"]), None if d.get("detail") is None else str(d["detail"])),
    JudgeFinished.kind: lambda d: JudgeFinished(),
}


class MalformedEvent(ValueError):
    """A line of a known kind whose fields do not validate: what scores cannot be read from it."""


def event_line(event: JudgeEvent) -> str:
    """``event`` as its JSON line (with the newline)."""
    return json.dumps({"event": event.kind, **event.fields()}) + "\n"


def parse_event(line: str) -> JudgeEvent | None:
    """One line of the events file as its typed event.

    None for a line that is no event at all: cut off by a kill (not JSON), not an object,
    or of a kind this grader does not write. :class:`MalformedEvent`, saying which kind and
    why, for an event whose fields do not validate.
    """
    try:
        raw = json.loads(line)
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None
    kind = raw.pop("event", None)
    reader = _READERS.get(kind) if isinstance(kind, str) else None
    if reader is None:
        return None
    try:
        return reader(raw)
    except (ValidationError, KeyError, TypeError) as e:
        why = (describe_invalid("", e, show_input=False, limit=3).strip() if isinstance(e, ValidationError)
               else f"{type(e).__name__}: {e}")
        raise MalformedEvent(f"the judge wrote a malformed {kind!r} event: {why}") from None
