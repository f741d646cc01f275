"""What a report says the submission did outside its exercise's rules: forbidden APIs, findings, violations.

Part of the report model (``grader.reports.model``, which re-exports them): plain data, closed
sets as Enums, every text the judge's own words.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_enum_values=False)


#: A forbidden API's name as the judge writes one: a dotted Python name from the exercise's list.
_API_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,15}")
#: What a candidate reads for a hit whose stored name is not one the judge could have written.
UNNAMED_API = "a forbidden API"


def api_name(api: str) -> str:
    """``api`` when it is a name the judge writes (a dotted Python name, at most 120 characters),
    else :data:`UNNAMED_API`: a name the sandbox chose never reaches a candidate."""
    return api if len(api) <= 120 and _API_NAME.fullmatch(api) else UNNAMED_API


class ForbiddenHit(_Model):
    api: str
    how: str = Field(description="'static' (found in the source) or 'runtime' (called during a check)")
    where: str = Field(description="file:line for static hits, the check id for runtime hits")
    check: str | None = None
    via: str = Field(default="", description="the name the source used when it is not the API's own, "
                                             "e.g. torch._scaled_dot_product_attention_math")
    line: int | None = Field(default=None, exclude=True,
                             description="a static hit's line, for the judge's own words while it grades (``where`` "
                                         "holds it for a reader of the JSON, which does not store this field)")


class FindingKind(str, Enum):
    """What the judge's source audit (or the sandbox's second net) found besides forbidden APIs."""

    TAMPERING = "tampering"  # reaches for the grader, the interpreter's state or the call stack: no credit at all
    DYNAMIC_ACCESS = "dynamic_access"  # a module reached through a name the judge cannot read: a flag
    PRIVATE_TORCH = "private_torch"  # torch._C, torch.ops or another private torch name: a flag


#: How each kind is named on scorecards, the batch CSV and the panel page.
FINDING_LABELS = {FindingKind.TAMPERING: "tampering", FindingKind.DYNAMIC_ACCESS: "dynamic access",
                  FindingKind.PRIVATE_TORCH: "private torch"}


class Finding(_Model):
    kind: FindingKind
    what: str = Field(description="what was reached for, e.g. 'sys.setprofile' or 'getattr(torch.nn.functional, ...)'")
    where: str = Field(description="file:line for what the source audit found, the check id for the sandbox's net")
    how: Literal["static", "runtime"] = "static"


class ViolationCode(str, Enum):
    """How a submission leaves its exercise's language subset (``grader.subset.audit``): a closed set, each
    told on the scorecard in the judge's own words. Any violation leaves every check not run."""

    IMPORT = "import"  # a module outside the subset, a relative or a star import
    MEMBER = "member"  # a module member outside the subset: os.system, torch.hub, torch.ops
    PRIVATE = "private"  # a private name of a module: torch._C, torch._foreach_norm, os._exit
    BUILTIN = "builtin"  # exec, eval, compile, __import__, globals, locals, vars, breakpoint, help...
    DUNDER = "dunder"  # a dunder attribute or name outside the short list the subset allows
    FRAME = "frame"  # frame, code, traceback or generator internals: f_back, gi_frame, co_code...
    MODULE_VALUE = "module_value"  # a module stored, passed, returned or put in a container
    ATTRIBUTE_BUILTIN = "attribute_builtin"  # getattr/setattr/hasattr/delattr used other than called
    MODULE_WRITE = "module_write"  # assigns a module's function, class or submodule
    UNSAFE_LOAD = "unsafe_load"  # torch.load that could unpickle code (weights_only not True, pickle_module)
    ANNOTATION = "annotation"  # an annotation (code typing evaluates) naming a value, not a type
    DATA_NAMESPACE = "data_namespace"  # a class or attributes built from data: type(n, b, dict), typing's call forms
    GUARD = "guard"  # the sandbox's guard refused a computed attribute name or an import during a check


#: How each code is named on scorecards, the batch CSV and the panel page.
VIOLATION_LABELS = {
    ViolationCode.IMPORT: "import outside the subset", ViolationCode.MEMBER: "name outside the subset",
    ViolationCode.PRIVATE: "private name", ViolationCode.BUILTIN: "builtin outside the subset",
    ViolationCode.DUNDER: "dunder", ViolationCode.FRAME: "frame access",
    ViolationCode.MODULE_VALUE: "module used as a value", ViolationCode.ATTRIBUTE_BUILTIN: "getattr as a value",
    ViolationCode.MODULE_WRITE: "writes a module", ViolationCode.UNSAFE_LOAD: "unsafe load",
    ViolationCode.ANNOTATION: "annotation that is not a type", ViolationCode.DATA_NAMESPACE: "names from data",
    ViolationCode.GUARD: "refused in the sandbox",
}


class Violation(_Model):
    """One way the submission leaves its exercise's subset, found by the judge from the source (``static``)
    or refused by the sandbox's guard during a check (``runtime``). ``text`` is made by the judge: quoted
    names come from the judge's own parse of the candidate's file, never from the sandbox."""

    code: ViolationCode
    text: str = Field(description="the judge's words: what the line does")
    fix: str = Field(default="", description="the judge's words: how to write it inside the subset")
    line: int | None = Field(default=None, description="the submission's line (static), None for a runtime refusal")
    column: int | None = None
    how: Literal["static", "runtime"] = "static"
    check: str | None = Field(default=None, description="runtime: the check during which the guard refused; "
                                                        "a candidate's copy names a hidden check by its safe name")

    @property
    def where(self) -> str:
        if self.how == "runtime":
            return self.check or "a check"
        return f"line {self.line}" if self.line is not None else "the file"
