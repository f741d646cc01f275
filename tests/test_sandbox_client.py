"""The worker and the judge's Sandbox, over the local transport (the same worker Docker runs)."""

import textwrap
from pathlib import Path

import pytest
import torch

from grader.exercise import Limits
from grader.wire.protocol import Opaque
from grader.backends.call_result import Failure
from grader.backends.client import Sandbox
from grader.backends.local_backend import local_starter
from grader.backends.staging import stage

PROBES = Path(__file__).parent / "fixtures" / "probe_kit" / "probes.py"


@pytest.fixture
def sandbox_for(tmp_path):
    opened = []

    def open_(source: str, *, forbid=(), kernels=None, call_timeout_s=5.0, max_frame_bytes=64 * 2**20):
        sub = tmp_path / f"cand{len(opened)}.py"
        sub.write_text(textwrap.dedent(source))
        staged = stage(probes=PROBES, submission=sub, module_name="cand", dest=tmp_path / f"stage{len(opened)}")
        box = Sandbox(local_starter(staged, list(forbid), Limits(memory_mb=1024), kernels=kernels),
                      call_timeout_s=call_timeout_s, max_frame_bytes=max_frame_bytes)
        opened.append(box)
        return box

    yield open_
    for box in opened:
        box.close()


def test_values_and_tensors_come_back(sandbox_for):
    box = sandbox_for("""
        import torch
        def f(x, d):
            return {"double": x * 2, "echo": d, "t": (1, None)}
    """)
    r = box.call("run", ["f", torch.arange(3.0), {"k": [1.5]}])
    assert r.ok and torch.equal(r.value["double"], torch.tensor([0.0, 2.0, 4.0]))
    assert r.value["echo"] == {"k": [1.5]} and r.value["t"] == (1, None)
    assert box.hello.torch == torch.__version__


def test_a_result_over_the_cap_fails_that_call_by_name_and_the_next_call_gets_a_fresh_sandbox(sandbox_for):
    box = sandbox_for("""
        import torch
        def f(n):
            return torch.zeros(n, dtype=torch.uint8)
    """, max_frame_bytes=2**20)
    r = box.call("run", ["f", 4 * 2**20])
    assert r.failure is Failure.TOO_LARGE and r.value is None
    assert r.failure_message == "the sandbox sent a 4 MB result for a call; what one check may receive is limited " \
                                "to 1 MB for this exercise ([limits] result_mb)"
    small = box.call("run", ["f", 10])
    assert small.ok and small.value.shape == (10,) and box.starts == 2


def test_results_under_the_cap_one_by_one_cannot_pass_it_together_within_one_check(sandbox_for):
    """hypothesis keeps a failing check's examples alive: the budget is per check, not per call."""
    from grader.judge.calls import CheckSandbox, ResultTooLarge

    box = sandbox_for("""
        import torch
        def f(n):
            return torch.zeros(n, dtype=torch.uint8)
    """, max_frame_bytes=2**20)
    check = CheckSandbox(box)
    for _ in range(3):  # 3 x 300 KB: within 1 MB together
        assert check.call("run", "f", 300_000).shape == (300_000,)
    with pytest.raises(ResultTooLarge, match=r"the sandbox sent a 0.3 MB result for a call; what one check may "
                                             r"receive is limited to 1 MB for this exercise \(\[limits\] "
                                             r"result_mb\), and 0.9 MB had come back already"):
        check.call("run", "f", 300_000)
    assert CheckSandbox(box).call("run", "f", 300_000).shape == (300_000,)  # the next check has its own budget


def test_candidate_exception_is_data_with_our_frames_removed(sandbox_for):
    box = sandbox_for("""
        class MyError(ValueError):
            pass
        def f():
            raise MyError("n_heads must divide d_model")
    """)
    r = box.call("run", ["f"])
    assert r.error.type == "MyError" and "ValueError" in r.error.qualnames
    assert "n_heads must divide" in r.error.message
    files = [f.file for f in r.error.trace.frames]
    assert files[-1].endswith("cand.py") and not any(f.endswith("worker.py") for f in files)


def test_prints_are_captured_apart_from_the_protocol_and_capped(sandbox_for):
    box = sandbox_for("""
        import os, sys
        def f():
            print("hello from candidate")
            os.write(1, b"raw fd write\\n")
            sys.stderr.write("x" * 100000)
            return 7
    """)
    r = box.call("run", ["f"])
    assert r.value == 7
    assert r.output.startswith("hello from candidate\nraw fd write\n")
    assert len(r.output) <= 8000 and r.output_dropped > 90000
    assert box.call("run", ["f"]).value == 7  # the next call starts with a fresh capture


def test_non_plain_returns_become_opaque(sandbox_for):
    box = sandbox_for("""
        import torch
        class AlwaysEqual:
            def __eq__(self, other): return True
        class Sub(torch.Tensor):
            pass
        def f():
            return AlwaysEqual(), torch.ones(2).as_subclass(Sub)
    """)
    eq, sub = box.call("run", ["f"]).value
    assert isinstance(eq, Opaque) and eq.type_name == "AlwaysEqual" and eq != 1
    assert isinstance(sub, Opaque) and sub.type_name == "Sub"


def test_exit_at_call_is_a_crash_and_the_sandbox_restarts(sandbox_for):
    box = sandbox_for("""
        import os
        def die(): os._exit(0)
        def ok(): return "alive"
    """)
    r = box.call("run", ["die"])
    assert r.failure is Failure.CRASH and "exit code 0" in r.failure_message
    assert box.call("run", ["ok"]).value == "alive" and box.starts == 2


def test_timeout_kills_and_restarts(sandbox_for):
    box = sandbox_for("""
        def spin():
            while True: pass
        def ok(): return 1
    """, call_timeout_s=1.0)
    r = box.call("run", ["spin"])
    assert r.failure is Failure.TIMEOUT and "1 s deadline" in r.failure_message
    assert box.call("run", ["ok"]).value == 1


def test_crash_at_import_is_remembered_not_restarted_per_call(sandbox_for):
    box = sandbox_for("""
        import os
        os._exit(3)
    """)
    first = box.call("run", ["anything"])
    assert first.failure is Failure.CRASH and "importing the submission" in first.failure_message
    second = box.call("run", ["anything"])
    assert second.failure is Failure.CRASH and box.starts == 1


def test_import_error_is_a_candidate_error_each_call(sandbox_for):
    box = sandbox_for("def broken(:\n    pass\n")
    r = box.call("run", ["broken"])
    assert r.error.type == "SyntaxError"


def test_forbidden_calls_come_back_as_indices_into_the_list_the_worker_was_sent(sandbox_for):
    """Every route to a removed API is tests/test_removal.py's; here: what crosses the protocol."""
    box = sandbox_for("""
        import torch
        def f(x): return torch.nn.functional.relu6(x)
        def g(x): return x * 2
    """, forbid=["torch.mul", "torch.nn.functional.hardtanh"], kernels={"torch.nn.functional.hardtanh": ["relu6"]})
    assert box.call("run", ["f", torch.ones(1)]).forbidden == [1]
    assert box.call("run", ["g", torch.ones(1)]).forbidden == []  # the * operator is not torch.mul
    assert box.hello.forbidden_missing == [] and box.hello.forbidden_packages == []


def test_a_forged_forbidden_report_is_a_protocol_failure_in_the_judges_words(sandbox_for):
    """Issue 25: a correct file sent every hidden input back as the *name* of a forbidden-API hit."""
    box = sandbox_for("""
        import sys
        worker = sys.modules["grader.sandbox.worker"]  # the worker's own module, in the sandbox
        worker.Worker.handle_call = (lambda handle: lambda self, message: {
            **handle(self, message), "forbidden": ["hush-5551212 " * 10_000], "tampered": ["hush-5551212"]})(
            worker.Worker.handle_call)
        def f():
            return 1
    """)
    box.call("run", ["f"])  # the import patches the worker for the calls after this one
    r = box.call("run", ["f"])
    assert r.failure is Failure.PROTOCOL and r.value is None and r.forbidden == []
    assert r.failure_message == "the sandbox's report of forbidden API calls during a call is malformed"


def test_unknown_probe_is_an_error_not_a_crash(sandbox_for):
    box = sandbox_for("x = 1\n")
    r = box.call("nope")
    assert r.error.type == "LookupError" and "nope" in r.error.message


def test_a_candidate_that_forges_the_workers_error_record_gets_a_protocol_failure_that_says_so(sandbox_for):
    box = sandbox_for("""
        import sys
        worker = sys.modules["grader.sandbox.worker"]  # the worker's own module, in the sandbox
        worker._error = lambda exc, keep_dirs: {"type": 5, "qualnames": "ValueError", "builtin": "yes",
                                                "message": None}
        def f():
            raise KeyError("boom")
    """)
    r = box.call("run", ["f"])
    assert r.error is None and r.failure is Failure.PROTOCOL
    assert r.failure_message.startswith("the sandbox reported a malformed error record:")
    assert "[type]" in r.failure_message and r.failure_message.endswith("(from a call)") and r.probe == "run"


class _Lost:
    """A sandbox whose every call ends in one failure (what ``Sandbox.call`` returns), for ``CheckSandbox``."""

    def __init__(self, result):
        self.result = result

    def call(self, probe, args, kwargs, already_bytes=0):
        return self.result


@pytest.mark.parametrize("failure, cause, summary", [
    (Failure.TIMEOUT, "its 3 s deadline: it used 3.0 of its 3 CPU-seconds",
     "it never finished importing (it ran past its 3 s deadline: it used 3.0 of its 3 CPU-seconds)"),
    (Failure.CRASH, "exit code 137", "the sandbox died while importing it: exit code 137"),
    (Failure.PROTOCOL, "", "a reworded message"),
])
def test_a_sandbox_failure_carries_its_kind_and_cause_and_the_import_summary_is_decided_by_them(failure, cause,
                                                                                                 summary):
    """Issue 28: the failed import's summary came from splitting the message on " ran past "; a reworded message
    (no such words in it) now gets the same summary, since the kind and the cause travel with the exception."""
    from grader.backends.call_result import CallResult
    from grader.judge.calls import CheckSandbox, SandboxFailure

    result = CallResult("scale", failure=failure, failure_message="a reworded message", failure_cause=cause,
                        during_import=True)
    box = CheckSandbox(_Lost(result))
    raised = []
    for _ in range(2):  # the second call replays the lost sandbox's failure, kind and cause included
        with pytest.raises(SandboxFailure) as caught:
            box.call("scale", 1)
        raised.append(caught.value)
    for exc in raised:
        assert exc.kind is failure and exc.cause == cause and exc.during_import
        assert str(exc) == "a reworded message" and exc.import_summary() == summary
