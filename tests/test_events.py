"""The judge's events: one typed union, written and parsed in one place (grader.wire.events)."""

from __future__ import annotations

import json

import pytest

from grader.reports.model import CheckResult, LoadError, Status, Visibility
from grader.wire.events import (CheckFinished, Collected, Infra, JudgeFinished, LoadFailed, MalformedEvent, SandboxUsed,
                                Started, event_line, parse_event)
from grader.wire.selfreport import SandboxSummary
from grader.wire.spec import CheckSpec

RESULT = CheckResult(id="t.py::test_a[1]", name="A", status=Status.FAILED, score=0, max_score=2,
                     visibility=Visibility.HIDDEN, message="wrong")
EVERY_KIND = [
    Collected((CheckSpec(id="t.py::test_a[1]", name="A", points=2, visibility=Visibility.HIDDEN),)),
    Started("t.py::test_a[1]"),
    CheckFinished(RESULT),
    LoadFailed(LoadError(found="sandbox", summary="NameError: x")),
    SandboxUsed(SandboxSummary(sandbox="local", starts=1)),
    Infra("the engine went away"),
    JudgeFinished(),
]


@pytest.mark.parametrize("event", EVERY_KIND, ids=lambda e: e.kind)
def test_every_kind_reads_back_as_itself(event):
    line = event_line(event)
    assert line.endswith("\n") and line.count("\n") == 1
    assert parse_event(line) == event


def test_the_lines_keep_their_flat_format():
    """What the plugin writes, field for field: the kind beside the model's own fields."""
    assert json.loads(event_line(CheckFinished(RESULT))) == {"event": "result", **RESULT.model_dump(mode="json")}
    assert json.loads(event_line(Infra("why"))) == {"event": "infra", "reason": "why"}
    assert CheckFinished(RESULT).id == RESULT.id and CheckFinished(RESULT).status is Status.FAILED


@pytest.mark.parametrize("line", ['{"event": "result", "id": "a", "sta', "not json", "[1, 2]", '{"event": "later"}',
                                  '{"no": "kind"}'])
def test_a_line_that_is_no_event_is_none(line):
    assert parse_event(line) is None


@pytest.mark.parametrize("line, named", [('{"event": "result", "id": "a", "status": "passed"}', "'result'"),
                                         ('{"event": "sandbox"}', "'sandbox'"),
                                         ('{"event": "collected"}', "KeyError"),
                                         ('{"event": "collected", "checks": [{"id": ""}]}', "'collected'")])
def test_a_known_kind_with_bad_fields_is_malformed_naming_it(line, named):
    with pytest.raises(MalformedEvent, match="the judge wrote a malformed") as e:
        parse_event(line)
    assert named in str(e.value)
