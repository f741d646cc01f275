"""What a sandbox says about itself: the worker's hello, and the judge's summary of the sandbox it used.

The worker sends a ``hello`` frame when it starts (``grader.sandbox.worker.serve``):
its torch and Python versions, whether it sees CUDA and how many GPUs, which
forbidden APIs it could not find and which are whole packages (indices into the
judge's forbidden list), which resource limits it applied. The worker runs in the
sandbox, which is candidate territory, so the hello is untrusted data:
:func:`read_hello` validates it strictly (types, sizes, shapes, no extra fields) and
turns anything else into :class:`MalformedSelfReport`, which the client reports as
a sandbox that did not start ("not graded"), never a crash further on.

Nothing in it is free text: versions have a version's shape, forbidden APIs are
indices the judge names from the exercise's own list, limits are ``RLIMIT_*`` names
and a refusal is one word of :data:`LIMIT_REFUSALS`. What a report says about the
sandbox is the judge's wording of those.

:class:`SandboxSummary` is what the judge tells the host about the sandbox at the
end of a grading (its "sandbox" event): the kind and image the host chose, how many
workers it took, and the validated hello. The worker stays plain Python (no pydantic
in the runtime image): it builds the hello as a dict, and only this side validates.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from grader.errors import describe_invalid

#: A version as torch and Python write one: "2.13.0+cpu", "3.11.7", "12.4", "3.13.0rc1".
_Version = Annotated[str, StringConstraints(pattern=r"^[0-9][0-9A-Za-z.+_-]{0,39}$")]
#: A resource limit's name: "RLIMIT_AS".
_Rlimit = Annotated[str, StringConstraints(pattern=r"^RLIMIT_[A-Z]{1,20}$")]
#: Far more items than any exercise forbids or limits: a list longer than this is not an honest worker's.
MAX_ITEMS = 200
#: A forbidden API, as its place in the list the judge sent (``--forbid``).
_ApiIndex = Annotated[int, Field(ge=0, lt=MAX_ITEMS)]
#: Why the worker could not apply a limit: "refused" (setrlimit failed), "unknown" (no such limit
#: on this platform), "unsupported" (no ``resource`` module at all).
LIMIT_REFUSALS = ("refused", "unknown", "unsupported")
#: Far more GPUs than one machine has.
MAX_GPUS = 1024


class MalformedSelfReport(Exception):
    """The sandbox's hello is not what the worker sends: the sandbox cannot be trusted to grade in."""


class SandboxHello(BaseModel):
    """The worker's hello, validated: the same fields ``grader.sandbox.worker.serve`` sends."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    torch: _Version
    python: _Version
    cuda: bool
    cuda_version: _Version | None = Field(description="torch.version.cuda; None for a CPU build of torch")
    gpus: int = Field(ge=0, le=MAX_GPUS)
    forbidden_missing: list[_ApiIndex] = Field(max_length=MAX_ITEMS,
                                               description="forbidden APIs (indices) this torch does not have")
    forbidden_packages: list[_ApiIndex] = Field(max_length=MAX_ITEMS, description=(
        "forbidden APIs (indices) that are whole packages: their import is refused in the sandbox"))
    rlimits_applied: list[_Rlimit] = Field(max_length=MAX_ITEMS)
    rlimits_failed: dict[_Rlimit, Literal[LIMIT_REFUSALS]] = Field(max_length=MAX_ITEMS,
                                                                   description="limit name -> why it was not applied")
    no_exec: bool = Field(description="the no-new-program filter is in force (grader.sandbox.no_exec)")
    generation: int | None = Field(default=None, ge=1, le=1_000_000,
                                   description="which worker of the sandbox's worker server this is (1: the first)")


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
                                         "charged to the sandbox's own clocks (grader.backends.accounting)")
    hello: SandboxHello | None = Field(default=None, description="None: no worker ever greeted")
