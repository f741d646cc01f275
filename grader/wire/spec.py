"""A check's spec: what the judge knows about a check before it runs, from its markers and docstring.

The judge's pytest plugin makes one per collected check (``grader.judge.plugin``)
and writes them in its "collected" event; the host reads them back
(``grader.host.runner``) for the grading (``grader.host.grading``) and the catalog's
counts (``grader.practice.catalog``). The judge is trusted, but the spec crosses a
process boundary as JSON, so the host validates it on reading: a malformed event
is a clear "not graded" reason, never a ``KeyError`` half-way through a report.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from grader.reports.model import Visibility


class CheckSpec(BaseModel):
    """One check as collected: its id, its scorecard name, what it is worth and who sees its details."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, description="pytest node id relative to checks/")
    name: str = Field(description="first line of the docstring, or one made up from the function's name")
    points: float = Field(ge=0)
    visibility: Visibility
    hint: str | None = None
    documented: bool = Field(default=True, description="False: the check has no docstring and its name is made up")
    gpu: bool = Field(default=False, description="marked gpu: it runs only in a sandbox that sees a GPU")
