"""Typed records that cross from the sandbox (untrusted) and the judge (trusted, another process): each is
validated where it is read, so a malformed one is a clear failure or "not graded", never a crash (issue 16)."""

import json

import pytest

from grader.wire import protocol
from grader.judge.calls import CandidateError, ProtocolViolation
from grader.judge.expect import expect_raised
from grader.host.runner import JudgeRun, _read_events
from grader.wire.spec import CheckSpec
from grader.reports.model import Visibility
from grader.backends.client import Sandbox, SandboxStartError, Transport
from grader.wire.selfreport import MalformedSelfReport, read_hello

HELLO = {"type": "hello", "torch": "2.13.0+cpu", "python": "3.12.3", "cuda": False, "cuda_version": None,
         "gpus": 0, "forbidden_missing": [], "forbidden_packages": [], "rlimits_applied": ["RLIMIT_AS"],
         "rlimits_failed": {}, "no_exec": True}


# ------------------------------------------------------------------ the sandbox's self-report (its hello)


class GreetingWorker(Transport):
    """A sandbox whose worker sends ``hello`` as its greeting, then nothing."""

    def __init__(self, hello: dict):
        self._out = bytearray(protocol.encode(hello))
        self.closed = False

    def send(self, data: bytes) -> None:
        pass

    def read(self, n: int, deadline: float) -> bytes:
        out = bytes(self._out[:n])
        del self._out[:n]
        return out

    def close(self) -> None:
        self.closed = True


def test_a_well_formed_hello_becomes_a_typed_record():
    hello = read_hello(HELLO)
    assert hello.gpus == 0 and hello.cuda_version is None and hello.rlimits_applied == ["RLIMIT_AS"]


@pytest.mark.parametrize("field, forged, named", [
    ("gpus", "many", "[gpus]"),  # the judge used to call int() on it: a ValueError mid-grading
    ("gpus", True, "[gpus]"),  # a bool is not a count
    ("gpus", -1, "[gpus]"),
    ("forbidden_missing", [0] * 100_000, "[forbidden_missing]"),  # one warning per item on the report
    ("forbidden_missing", ["torch.x"], "[forbidden_missing.0]"),  # an index into the judge's list, not a name
    ("forbidden_packages", [True], "[forbidden_packages.0]"),
    ("forbidden_packages", [500], "[forbidden_packages.0]"),
    ("rlimits_failed", {"RLIMIT_AS": 7}, "[rlimits_failed.RLIMIT_AS]"),
    ("rlimits_failed", {"RLIMIT_AS": "hush-5551212"}, "[rlimits_failed.RLIMIT_AS]"),  # a word of LIMIT_REFUSALS
    ("rlimits_applied", ["hush-5551212"], "[rlimits_applied.0]"),
    ("torch", "x" * 10_000, "[torch]"),
    ("torch", "2.13.0 hush-5551212", "[torch]"),  # short, but not a version: free text from the sandbox
    ("python", "3.11.7\x1b[2J", "[python]"),
    ("cuda_version", "12.4 " + "x" * 30, "[cuda_version]"),
    ("extra", "anything", "[extra]"),
])
def test_a_sandbox_that_sends_a_malformed_self_report_does_not_start_and_says_which_field(field, forged, named):
    hello = {**HELLO, field: forged}
    worker = GreetingWorker(hello)
    box = Sandbox(lambda: worker, call_timeout_s=5.0, spares=0)
    try:
        with pytest.raises(SandboxStartError) as raised:
            box.ensure_started()
    finally:
        box.close()
    message = str(raised.value)
    assert message.startswith("the sandbox's self-report (its hello) is malformed:") and named in message
    assert len(message) <= 1000 and "x" * 30 not in message and "hush" not in message  # not repeated
    assert worker.closed and box.hello is None


def test_a_missing_field_is_named_and_a_non_text_refusal_never_reaches_the_report():
    with pytest.raises(MalformedSelfReport, match=r"\[cuda\] Field required"):
        read_hello({k: v for k, v in HELLO.items() if k != "cuda"})
    with pytest.raises(MalformedSelfReport, match=r"rlimits_failed"):
        read_hello({**HELLO, "rlimits_failed": {"RLIMIT_AS": ["not", "text"]}})


def test_every_field_of_a_hello_is_a_shape_not_free_text():
    """Issue 25: nothing the sandbox says about itself reaches a report in its own words."""
    hello = read_hello({**HELLO, "torch": "2.13.0+cpu", "python": "3.13.0rc1", "cuda_version": "12.4",
                        "forbidden_missing": [3], "rlimits_failed": {"RLIMIT_NOFILE": "refused"}})
    assert hello.forbidden_missing == [3] and hello.rlimits_failed == {"RLIMIT_NOFILE": "refused"}


# ------------------------------------------------------------------ the candidate's error record
# (a candidate forging the worker's own record: tests/test_sandbox_client.py)


@pytest.mark.parametrize("forged", [
    {"type": "ValueError", "message": "no qualnames"},
    {"type": "ValueError", "qualnames": ["ValueError"], "builtin": False, "message": "m" * 20_000},
    ["ValueError"],
])
def test_an_error_record_a_probe_sends_back_is_validated_before_a_check_uses_it(forged):
    """ddp_step's checks re-raise a rank's error record as CandidateError; a malformed one is a clear failure."""
    with pytest.raises(ProtocolViolation, match="malformed error record|not a record") as raised:
        CandidateError("ddp_run", forged)
    assert raised.value.probe == "ddp_run" and "ddp_run" not in str(raised.value)


def test_expect_raised_with_a_forged_record_fails_the_check_by_saying_so():
    with pytest.raises(ProtocolViolation, match=r"\[qualnames\]"):
        expect_raised({"type": "RuntimeError", "qualnames": "RuntimeError", "message": "m"}, "RuntimeError",
                      what="restore")
    with pytest.raises(ProtocolViolation, match=r"\[type\]"):
        expect_raised("RuntimeError", "RuntimeError", what="restore")


# ------------------------------------------------------------------ the check spec, judge -> host


def _events(tmp_path, *events: dict) -> JudgeRun:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    run = JudgeRun()
    _read_events(path, run)
    return run


def test_the_collected_specs_are_read_back_as_typed_records(tmp_path):
    spec = CheckSpec(id="test_a.py::test_a", name="a", points=2.0, visibility=Visibility.HIDDEN)
    run = _events(tmp_path, {"event": "collected", "checks": [spec.model_dump(mode="json")]})
    assert run.collected == [spec] and run.infra is None


@pytest.mark.parametrize("checks, named", [
    ([{"id": "test_a.py::test_a", "name": "a", "visibility": "visible"}], "points"),
    ([{"id": "test_a.py::test_a", "name": "a", "points": 1.0, "visibility": "secret"}], "visibility"),
    ([{"id": "test_a.py::test_a", "name": "a", "points": -1.0, "visibility": "visible"}], "points"),
])
def test_a_malformed_spec_makes_the_run_not_graded_naming_the_field(tmp_path, checks, named):
    run = _events(tmp_path, {"event": "collected", "checks": checks})
    assert run.collected == [] and run.infra.startswith("the judge wrote a malformed 'collected' event:")
    assert named in run.infra


def test_a_sandbox_event_with_a_malformed_hello_makes_the_run_not_graded(tmp_path):
    run = _events(tmp_path, {"event": "sandbox", "sandbox": "local", "hello": {**HELLO, "gpus": "2"}})
    assert run.sandbox is None and "malformed 'sandbox' event" in run.infra and "gpus" in run.infra
