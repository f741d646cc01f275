"""What a sandbox says about itself: the worker's hello, and the judge's summary of the sandbox it used.

The worker sends a ``hello`` frame when it starts (``grader.sandbox.worker.serve``):
its torch and Python versions, whether it sees CUDA and how many GPUs, which
forbidden APIs its tripwire could not find, which resource limits it applied. The
worker runs in the sandbox, which is candidate territory, so the hello is untrusted
data: :func:`read_hello` validates it strictly (types, sizes, no extra fields) and
turns anything else into :class:`MalformedSelfReport`, which the client reports as
a sandbox that did not start ("not graded"), never a crash further on.

:class:`SandboxSummary` is what the judge tells the host about the sandbox at the
end of a grading (its "sandbox" event): the kind and image the host chose, how many
workers it took, and the validated hello. The worker stays plain Python (no pydantic
in the runtime image): it builds the hello as a dict, and only this side validates.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from grader.errors import describe_invalid

#: A name or short message in the hello (a version, an API's dotted name, a limit's refusal): capped.
_Text = Annotated[str, StringConstraints(max_length=300)]
#: Far more items than any exercise forbids or limits: a list longer than this is not an honest worker's.
MAX_ITEMS = 200
#: Far more GPUs than one machine has.
MAX_GPUS = 1024


class MalformedSelfReport(Exception):
    """The sandbox's hello is not what the worker sends: the sandbox cannot be trusted to grade in."""


class SandboxHello(BaseModel):
    """The worker's hello, validated: the same fields ``grader.sandbox.worker.serve`` sends."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    torch: _Text
    python: _Text
    cuda: bool
    cuda_version: _Text | None = Field(description="torch.version.cuda; None for a CPU build of torch")
    gpus: int = Field(ge=0, le=MAX_GPUS)
    tripwire_missing: list[_Text] = Field(max_length=MAX_ITEMS,
                                          description="forbidden APIs this torch does not have")
    tripwire_modules: list[_Text] = Field(max_length=MAX_ITEMS,
                                          description="forbidden APIs that are whole packages (the source audit covers them)")
    rlimits_applied: list[_Text] = Field(max_length=MAX_ITEMS)
    rlimits_failed: dict[_Text, _Text] = Field(max_length=MAX_ITEMS, description="limit name -> why it was refused")


def read_hello(message: dict) -> SandboxHello:
    """The hello frame ``message`` (its ``type`` already checked) as a :class:`SandboxHello`, or
    :class:`MalformedSelfReport` naming the first fields that are wrong (never their untrusted values)."""
    fields = {k: v for k, v in message.items() if k != "type"}
    try:
        return SandboxHello.model_validate(fields)
    except ValidationError as e:
        # No input values in the message, and a cap: a field's name may be a key the sandbox chose.
        raise MalformedSelfReport(describe_invalid("the sandbox's self-report (its hello) is malformed:", e,
                                                   show_input=False, limit=3)[:1000]) from None


class SandboxSummary(BaseModel):
    """The sandbox one grading used, as the judge's "sandbox" event tells the host."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sandbox: str = Field(description="the kind: local or docker")
    image: str | None = None
    image_id: str | None = None
    limits_unavailable: dict[str, str] = Field(default_factory=dict,
                                               description="local: limits this platform cannot set, and why")
    starts: int = Field(default=0, ge=0, description="workers taken into service")
    deadline_warnings: list[str] = Field(default_factory=list, description="why some call deadline could not be "
                                         "charged to the sandbox's own clocks (grader.sandbox.accounting)")
    hello: SandboxHello | None = Field(default=None, description="None: no worker ever greeted")
