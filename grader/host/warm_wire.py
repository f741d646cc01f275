"""What crosses the warm judge server's pipes (``grader.host.warm`` <-> ``grader.host.zygote``): two small types.

A request is one JSON line: a judge run (``JudgeRun``) or a subset check (``AuditRun``); a reply is one JSON
line, ``Forked`` when the child started or ``Ended`` when it exited. Each side parses a line once, into
its type, and reads fields, never which keys happen to be present.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str


class JudgeRun(_Message):
    """Run ``pytest argv`` in ``cwd`` with ``env`` (the grader's environment now), its output to ``log``."""

    kind: Literal["judge"] = "judge"
    argv: list[str]
    cwd: str
    log: str
    env: dict[str, str]


class AuditRun(_Message):
    """Run the subset check whose ``AuditRequest`` is in the file ``input``; its answer to ``out``."""

    kind: Literal["audit"] = "audit"
    input: str
    out: str
    log: str


class Forked(_Message):
    kind: Literal["forked"] = "forked"
    pid: int


class Ended(_Message):
    kind: Literal["ended"] = "ended"
    exit: int


Request = Annotated[Union[JudgeRun, AuditRun], Field(discriminator="kind")]
Reply = Annotated[Union[Forked, Ended], Field(discriminator="kind")]
REQUEST = TypeAdapter(Request)
REPLY = TypeAdapter(Reply)


def line(message: _Message) -> bytes:
    """One message as the line that carries it."""
    return message.model_dump_json().encode() + b"\n"
