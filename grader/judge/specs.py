"""What a collected check is, and the order checks run in: read in the judge child, before any candidate code runs.

A check is an ordinary pytest test; its spec (name, points, visibility, hint, gpu) comes
from its docstring and its markers, once, at collection (the judge's "collected" event
carries these specs to the host).
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from grader.reports.model import Visibility
from grader.wire.spec import CheckSpec


def visible_first(items: list, specs: dict[str, CheckSpec]) -> list:
    """Every visible check, then every hidden one, each group in its own order.

    One sandbox serves the whole grading, and the candidate's code in it can
    remember anything it is sent. Run in this order, a visible check (whose
    message, output and details the candidate sees) runs where no hidden input
    has ever been: the sandbox, started during collection, has seen only visible
    inputs, which are public anyway. What the candidate's code records from then
    on can only surface in hidden checks, whose details are withheld
    (``grader.reports.redact``). A crash restarts the sandbox within its phase,
    and a grading's sandbox is never reused, so no other order can be reached.
    """
    return ([i for i in items if specs[i.nodeid].visibility is Visibility.VISIBLE]
            + [i for i in items if specs[i.nodeid].visibility is not Visibility.VISIBLE])


def check_spec(item, default_visibility: str) -> CheckSpec:
    """A collected check's spec: its name from its docstring's first line, its points, visibility, hint and gpu
    from its markers (a ``pytest.UsageError`` naming the check when a marker holds nonsense)."""
    doc = (getattr(item, "obj", None).__doc__ or "").strip() if getattr(item, "obj", None) else ""
    made_up = getattr(item, "originalname", None) or item.name  # the function's name, never its parameters
    name = doc.splitlines()[0].strip() if doc else made_up.removeprefix("test_").replace("_", " ")
    if getattr(item, "callspec", None) is not None:
        name += f" [{item.callspec.id}]"
    points = item.get_closest_marker("points")
    visibility = item.get_closest_marker("visibility")
    hint = item.get_closest_marker("hint")
    value = points.args[0] if points else 1
    if not isinstance(value, (int, float)) or value < 0:
        raise pytest.UsageError(f"{item.nodeid}: points must be a number >= 0, got {value!r}")
    kind = visibility.args[0] if visibility else default_visibility
    if kind not in ("visible", "hidden"):
        raise pytest.UsageError(f"{item.nodeid}: visibility must be 'visible' or 'hidden', got {kind!r}")
    try:
        return CheckSpec(id=item.nodeid, name=name, points=float(value), visibility=Visibility(kind),
                         hint=hint.args[0] if hint else None, documented=bool(doc),
                         gpu=item.get_closest_marker("gpu") is not None)
    except ValidationError as e:  # a hint that is not text, say
        raise pytest.UsageError(f"{item.nodeid}: the check's markers do not make a check spec: {e}") from None
