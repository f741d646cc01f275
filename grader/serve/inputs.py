"""Everything a browser sends, bounded and checked before it is used: names, titles, times, files, form fields.

Names are NFC-normalised first (two spellings of "José" are one candidate), then held to
the batch's rule for names (``grader.batch.names``: no separators, control or invisible
characters, at most 100 characters), since a candidate's name becomes a folder of the
assessment's panel pages. Every refusal says what was wrong and what to send instead.
"""

from __future__ import annotations

import datetime as _dt
import unicodedata

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from grader.batch.names import name_problem
from grader.serve.errors import Refusal
from grader.serve.models import TITLE_MAX
from grader.serve.settings import MAX_SOURCE_BYTES
from grader.untrusted import shown

#: Candidates one invite form may add at once.
MAX_INVITES = 500


def _name(text: str, what: str, limit: int) -> str:
    name = unicodedata.normalize("NFC", text or "").strip()
    why = name_problem(name)
    if why is None and len(name) > limit:
        why = f"is {len(name)} characters long; the limit is {limit}"
    if why is not None:
        raise Refusal(400, f"The {what} {shown(name[:120], newlines=False)!r} {why}.",
                      fix=f"Give a {what} of at most {limit} characters, without '/', '\\' or control characters.")
    return name


def candidate_name(text: str) -> str:
    return _name(text, "candidate name", 100)


def user_name(text: str) -> str:
    return _name(text, "account name", 64)


def candidate_names(text: str) -> list[str]:
    """One candidate per line of ``text``, in order, each checked; a name given twice is refused."""
    names = [candidate_name(line) for line in (text or "").splitlines() if line.strip()]
    if not names:
        raise Refusal(400, "No candidate names were given.", fix="Write one name per line.")
    if len(names) > MAX_INVITES:
        raise Refusal(400, f"{len(names)} names at once; the limit is {MAX_INVITES}.", fix="Invite them in parts.")
    seen: set[str] = set()
    for name in names:
        if name.casefold() in seen:
            raise Refusal(400, f"The name {name!r} is given twice.", fix="Give each candidate a name of their own.")
        seen.add(name.casefold())
    return names


def utc(text: str, field: str) -> _dt.datetime:
    """A form's date and time (``2026-11-28T10:00``, read as UTC)."""
    try:
        value = _dt.datetime.fromisoformat((text or "").strip()[:40])
    except ValueError:
        raise Refusal(400, f"{field} {shown(text[:40], newlines=False)!r} is not a date and time.",
                      fix="Use the form YYYY-MM-DDTHH:MM (UTC).") from None
    return value.replace(tzinfo=_dt.timezone.utc) if value.tzinfo is None else value.astimezone(_dt.timezone.utc)


class AssessmentForm(BaseModel):
    """The new-assessment form, parsed once (every field bounded)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    title: str = Field(min_length=1, max_length=TITLE_MAX)
    exercises: list[str] = Field(min_length=1, max_length=20)
    time_limit_min: int = Field(ge=5, le=14 * 24 * 60)
    opens_at: _dt.datetime
    closes_at: _dt.datetime
    sandbox: str = Field(max_length=16)
    gpus: str | None = Field(default=None, max_length=64)
    runs_per_minute: int = Field(default=6, ge=1, le=60)
    max_concurrent: int = Field(default=4, ge=1, le=256)

    @field_validator("title")
    @classmethod
    def _title(cls, value: str) -> str:
        value = unicodedata.normalize("NFC", value)
        if shown(value, newlines=False) != value:
            raise ValueError("holds control or invisible characters")
        return value

    @classmethod
    def parse(cls, fields: dict) -> "AssessmentForm":
        try:
            form = cls.model_validate(fields)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "the form"
            raise Refusal(400, f"The assessment's {where}: {first['msg']}.", fix="Correct it and send the form again.")
        if form.closes_at <= form.opens_at:
            raise Refusal(400, "The assessment closes before it opens.", fix="Give a closing time after the opening.")
        return form


def source_text(data: bytes, what: str = "The file") -> str:
    """A candidate's file as text: at most ``MAX_SOURCE_BYTES`` of UTF-8."""
    if len(data) > MAX_SOURCE_BYTES:
        raise Refusal(413, f"{what} is {len(data):,} bytes; the limit is {MAX_SOURCE_BYTES:,}.",
                      fix="Send the one Python file the exercise asks for.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Refusal(400, f"{what} is not UTF-8 text (byte {e.start} cannot be read).",
                      fix="Save it as UTF-8 and send it again.") from None
