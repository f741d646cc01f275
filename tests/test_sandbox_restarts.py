"""After a lost worker: a shorter deadline for later calls, and spare workers booted ahead (issue 14 §1).

Fake transports stand in for workers: they greet, then answer each call as a script says
(a value, a hang, death, at import or during the call). A hanging fake raises TimeoutError at
once instead of waiting out its deadline, so nothing here depends on the machine's speed:
the deadline a call ran under is read from ``CallResult.deadline_s`` and its message.
"""

import threading
import time

import pytest

from grader import protocol
from grader.reports.redact import without_probe_names
from grader.sandbox.booting import Spares
from grader.sandbox.client import Failure, Sandbox, Transport
from grader.sandbox import deadlines as deadlines_module
from grader.sandbox.deadlines import MAX_STRETCH, SLOWEST_FACTOR, CallDeadlines, Deadline, machine_load_factor

# ------------------------------------------------------------------ the deadline policy


def idle() -> float:
    """The load factor of an idle machine: these tests are about the policy, not about this machine's load."""
    return 1.0


def test_without_a_timeout_every_call_gets_the_full_deadline_however_slow_the_answers():
    deadlines = CallDeadlines(full_s=20, after_timeout_s=1, load=idle)
    deadlines.answered(19.0)
    assert deadlines.next() == Deadline(20, 20) and not deadlines.next().shortened


def test_after_a_timeout_the_deadline_is_the_floor_or_five_times_the_slowest_answer_capped_at_the_full_one():
    deadlines = CallDeadlines(full_s=20, after_timeout_s=1, load=idle)
    deadlines.answered(0.05)
    deadlines.timed_out()
    assert deadlines.next() == Deadline(1, 20)  # 5 x 0.05 s is under the floor
    deadlines.answered(0.6)
    assert deadlines.next() == Deadline(SLOWEST_FACTOR * 0.6, 20)  # a file slow everywhere keeps room for it
    deadlines.answered(7.0)
    assert deadlines.next() == Deadline(20, 20)  # never more than the full deadline
    assert deadlines.next(full_s=4) == Deadline(4, 4)  # a call's own deadline caps it the same way


def test_a_busy_machine_stretches_every_deadline_so_an_honest_file_is_not_cut_short():
    """The fresh-clone failure: on a machine with 8 tasks per core an honest file's first call overran
    20 s, and every later call then timed out under a 1 s deadline. Stretched, the later calls keep room."""
    busy = CallDeadlines(full_s=20, after_timeout_s=1, load=lambda: 4.0)
    assert busy.next() == Deadline(80, 80, 4.0)
    busy.timed_out()
    assert busy.next() == Deadline(4, 80, 4.0)  # the floor, stretched
    busy.answered(2.0)  # already measured on the busy machine: not stretched again
    assert busy.next() == Deadline(SLOWEST_FACTOR * 2.0, 80, 4.0)
    assert CallDeadlines(full_s=20, after_timeout_s=1, load=lambda: 100.0).next() == Deadline(
        20 * MAX_STRETCH, 20 * MAX_STRETCH, MAX_STRETCH)  # capped: a grading is never endless
    assert CallDeadlines(full_s=20, after_timeout_s=1, load=lambda: 0.2).next() == Deadline(20, 20)  # never shorter


def test_a_stretched_deadline_names_the_exercises_figure_first_then_the_stretch():
    assert Deadline(80, 80, 4.0).describe() == ("its 20 s deadline, stretched to 80 s "
                                                "(the machine was busy: 4.0 tasks per core)")
    assert Deadline(4, 80, 4.0).describe() == ("its 1 s deadline (shortened from 20 s after an earlier call timed "
                                               "out), stretched to 4 s (the machine was busy: 4.0 tasks per core)")


@pytest.mark.parametrize("load, cores, factor", [((0.5, 0, 0), 2, 1.0), ((6.0, 0, 0), 2, 3.0), ((400.0, 0, 0), 2, MAX_STRETCH),
                                                ((3.0, 0, 0), 1, 3.0)])
def test_the_machine_load_factor_is_runnable_tasks_per_core_between_one_and_the_cap(monkeypatch, load, cores, factor):
    monkeypatch.setattr(deadlines_module.os, "getloadavg", lambda: load)
    monkeypatch.setattr(deadlines_module.os, "sched_getaffinity", lambda pid: set(range(cores)))
    assert machine_load_factor() == factor


def test_without_a_load_average_the_machine_counts_as_idle(monkeypatch):
    def unavailable():
        raise OSError("no load average here")

    monkeypatch.setattr(deadlines_module.os, "getloadavg", unavailable)
    assert machine_load_factor() == 1.0


def test_a_deadline_says_what_applied_and_why_it_was_shortened():
    assert Deadline(20, 20).describe() == "its 20 s deadline"
    assert Deadline(1, 20).describe() == "its 1 s deadline (shortened from 20 s after an earlier call timed out)"
    assert Deadline(1.25, 20).describe(" while importing the submission") == \
        "its 1.25 s deadline while importing the submission (shortened from 20 s after an earlier call timed out)"


@pytest.mark.parametrize("full, after", [(0, 1), (20, 0), (20, -1)])
def test_a_deadline_that_is_not_positive_is_refused_by_name(full, after):
    with pytest.raises(ValueError, match="call deadlines must be positive"):
        CallDeadlines(full_s=full, after_timeout_s=after)


# ------------------------------------------------------------------ fakes


#: A well-formed hello (grader.sandbox.selfreport validates every field) from a torch that is not there.
HELLO = {"type": "hello", "torch": "0.0-fake", "python": "3", "cuda": False, "cuda_version": None, "gpus": 0,
         "forbidden_missing": [], "forbidden_packages": [], "rlimits_applied": [], "rlimits_failed": {}}


class FakeWorker(Transport):
    """Greets, then does what ``script[probe]`` says: a value to return, "hang", "die",
    "hang at import" or "die at import" (the first call of a worker imports the submission)."""

    def __init__(self, script: dict):
        self.script = script
        self.received: list[dict] = []
        self.closed = False
        self._imported = False
        self._dead = False
        self._out = bytearray(protocol.encode(HELLO))

    def send(self, data: bytes) -> None:
        assert not self.closed, "sent to a closed worker"
        message = protocol.decode(data[protocol.FRAME_HEADER_BYTES:])
        self.received.append(message)
        if message["type"] != "call":
            return
        action = self.script[message["probe"]]
        if not self._imported:
            self._out += protocol.encode({"type": "importing"})
            if action in ("hang at import", "die at import"):
                self._dead = action == "die at import"
                return
            self._imported = True
            self._out += protocol.encode({"type": "imported"})
        if action in ("hang", "die"):
            self._dead = action == "die"
            return
        self._out += protocol.encode({"type": "result", "id": message["id"], "ok": True, "value": action})

    def read(self, n: int, deadline: float) -> bytes:
        if self._out:
            data = bytes(self._out[:n])
            del self._out[:n]
            return data
        if self._dead or self.closed:
            return b""
        raise TimeoutError  # hanging: a real transport would wait until `deadline` first

    def exit_reason(self) -> str:
        return "exit code 0"

    def close(self) -> None:
        self.closed = True


class Starter:
    """The sandbox's ``start_transport``: records every worker it starts, in order."""

    def __init__(self, script: dict):
        self.script = script
        self.workers: list[FakeWorker] = []
        self.failing: set[int] = set()  # which starts (0 = the first) fail, as an engine refusing would
        self._starts = 0
        self._lock = threading.Lock()

    def __call__(self) -> FakeWorker:
        with self._lock:
            n, self._starts = self._starts, self._starts + 1
            if n in self.failing:
                raise OSError("the engine refused")
            worker = FakeWorker(self.script)
            self.workers.append(worker)
        return worker

    def wait_for(self, n: int) -> list[FakeWorker]:
        """The first ``n`` workers, once they have started (spares boot on threads)."""
        for _ in range(3000):
            if len(self.workers) >= n:
                return self.workers[:n]
            time.sleep(0.01)
        raise AssertionError(f"expected {n} workers to start, {len(self.workers)} did")


def calls(worker: FakeWorker) -> list[str]:
    return [m["probe"] for m in worker.received if m["type"] == "call"]


SCRIPT = {"ok": 1, "hang": "hang", "die": "die", "hang at import": "hang at import",
          "die at import": "die at import"}


@pytest.fixture
def box():
    opened = []

    def open_(**kwargs) -> tuple[Sandbox, Starter]:
        starter = Starter(SCRIPT)
        sandbox = Sandbox(starter, call_timeout_s=20, call_timeout_after_timeout_s=1, load=idle, **kwargs)
        opened.append(sandbox)
        return sandbox, starter

    yield open_
    for sandbox in opened:
        sandbox.close()


# ------------------------------------------------------------------ deadlines in the sandbox


def test_the_first_timeout_gets_the_full_deadline_and_the_later_ones_a_short_one_each_naming_it(box):
    sandbox, _ = box()
    assert sandbox.call("ok").deadline_s == 20
    first = sandbox.call("hang")
    assert first.failure is Failure.TIMEOUT and first.deadline_s == 20
    assert first.failure_message == "the call to 'hang' ran past its 20 s deadline"
    second = sandbox.call("hang")
    assert second.failure is Failure.TIMEOUT and second.deadline_s == 1
    assert second.failure_message == ("the call to 'hang' ran past its 1 s deadline "
                                      "(shortened from 20 s after an earlier call timed out)")
    # The scorecard takes the grader's probe name out of the message; the deadline stays.
    assert without_probe_names(second.failure_message).startswith("a call ran past its 1 s deadline (shortened")
    assert sandbox.call("ok").value == 1  # an answer still comes back under the short deadline


def test_a_slow_import_under_a_shortened_deadline_is_a_timeout_of_that_call_not_a_file_that_does_not_import(box):
    sandbox, starter = box()
    sandbox.call("hang")
    slow = sandbox.call("hang at import")
    assert slow.failure is Failure.TIMEOUT and not slow.during_import
    assert slow.failure_message == ("the call to 'hang at import' ran past its 1 s deadline while importing the "
                                    "submission (shortened from 20 s after an earlier call timed out)")
    assert sandbox.call("ok").value == 1  # tried again in a fresh worker, not answered from a remembered failure
    assert sandbox.starts == 3


def test_an_import_that_hangs_under_the_full_deadline_is_remembered(box):
    sandbox, starter = box()
    hung = sandbox.call("hang at import")
    assert hung.during_import and hung.deadline_s == 20
    again = sandbox.call("ok")
    assert again.failure is Failure.TIMEOUT and again.during_import and again.failure_message == hung.failure_message
    sandbox.close()
    assert len(starter.workers) == 1 and sandbox.starts == 1  # no spare was booted for a file that does not import


# ------------------------------------------------------------------ spares


def test_an_honest_grading_boots_no_spare(box):
    sandbox, starter = box()
    for _ in range(5):
        assert sandbox.call("ok").value == 1
    sandbox.close()
    assert len(starter.workers) == 1 and starter.workers[0].closed and sandbox.starts == 1


def test_after_a_loss_spares_boot_ahead_and_none_receives_anything_before_it_is_taken_into_service(box):
    sandbox, starter = box()
    assert sandbox.call("hang").failure is Failure.TIMEOUT
    first, *spares = starter.wait_for(3)
    assert calls(first) == ["hang"]
    assert all(spare.received == [] for spare in spares)  # booted (greeted) and sent nothing

    assert sandbox.call("ok").value == 1
    in_service = [s for s in spares if s.received]
    assert len(in_service) == 1 and calls(in_service[0]) == ["ok"]
    idle = [s for s in spares if s is not in_service[0]]
    assert idle[0].received == []  # still nothing: it is not in service

    sandbox.close()
    assert all(w.closed for w in starter.workers)
    assert all(w.received == [] for w in starter.workers if w not in (first, in_service[0]))  # no shutdown either
    assert sandbox.starts == 2  # workers taken into service, not the spares closed unused


def test_starts_counts_the_workers_taken_into_service(box):
    sandbox, starter = box()
    for _ in range(3):
        assert sandbox.call("die").failure is Failure.CRASH
    assert sandbox.call("ok").value == 1
    sandbox.close()
    assert sandbox.starts == 4
    assert len(starter.workers) > 4  # two spares kept booting ahead; the unused ones are not counted
    assert sum(1 for w in starter.workers if w.received) == 4


def test_spares_booted_before_the_file_fails_to_import_are_closed_and_no_more_are_booted(box):
    sandbox, starter = box()
    sandbox.call("hang")
    assert sandbox.call("die at import").during_import
    assert sandbox.call("ok").during_import  # remembered: no worker is asked again
    sandbox.close()
    assert len(starter.workers) == 3  # the first, and the two spares booted after its timeout; none since
    assert all(w.closed for w in starter.workers)


def test_a_spare_that_failed_to_boot_is_replaced_by_a_fresh_start(box):
    sandbox, starter = box()
    starter.failing = {1, 2}  # the two spares booted after the first worker's timeout
    sandbox.call("hang")
    assert sandbox.call("ok").value == 1  # not "not graded": the start in the foreground worked
    assert sandbox.starts == 2 and calls(starter.workers[-1]) == ["ok"]


def test_close_waits_for_a_spare_still_booting_and_closes_it():
    release = threading.Event()
    booted: list[FakeWorker] = []

    def slow_boot() -> FakeWorker:
        release.wait(30)
        booted.append(FakeWorker(SCRIPT))
        return booted[-1]

    spares = Spares(slow_boot, FakeWorker.close, count=2)
    spares.fill()
    threading.Timer(0.1, release.set).start()  # let them finish while close() waits
    spares.close()
    assert len(booted) == 2 and all(w.closed for w in booted)
    spares.fill()
    assert spares.take() is None  # a closed pool boots nothing more


def test_a_taken_spare_is_the_callers_and_is_not_closed_with_the_rest():
    spares = Spares(lambda: FakeWorker(SCRIPT), FakeWorker.close, count=2)
    spares.fill()
    mine = spares.take().result()
    spares.close()
    assert not mine.closed and mine.received == []
