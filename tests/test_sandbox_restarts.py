"""After a lost worker: a shorter deadline for later calls, and spare workers booted ahead (issue 14 §1);
deadlines charged to the sandbox's own clocks, decided by the judge alone (issue 25 §6).

Fake transports stand in for workers: they greet, then answer each call as a script says
(a value, a busy hang, a sleep, death, at import or during the call). They run on a fake
clock: a hanging fake moves the clock to the moment the client would next look (a busy one
charging that time to its CPU counter) instead of waiting it out, so nothing here depends on
the machine's speed or load: the deadline a call ran under is read from ``CallResult`` and its
message.
"""

import threading
import time

import pytest

from grader.wire import protocol
from grader.backends.accounting import Meter
from grader.backends.booting import Spares
from grader.backends.call_result import Failure
from grader.backends.client import Sandbox, Transport
from grader.backends import deadlines as deadlines_module
from grader.backends.deadlines import (GRACE_FRACTION, HARD_FACTOR, WALL_MARGIN, CallClock, CallDeadlines, Clock,
                                      Deadline, Sample)

# ------------------------------------------------------------------ the deadline policy


def test_without_a_timeout_every_call_gets_the_full_deadline():
    deadlines = CallDeadlines(full_s=20, after_timeout_s=1)
    assert deadlines.next() == Deadline(20, 20) and not deadlines.next().shortened
    assert deadlines.next(full_s=4) == Deadline(4, 4)  # a call's own deadline replaces the exercise's


def test_after_a_timeout_later_calls_get_the_floor_and_what_is_left_of_the_grace_which_only_timeouts_spend():
    """The attack: a first call that answered in 19 s made every later hang cost 20 s (5x the slowest answer,
    capped), 302 s for one file. The policy has no input from the candidate's answers at all: only the
    exercise's figures and which calls timed out."""
    deadlines = CallDeadlines(full_s=20, after_timeout_s=1)
    first = deadlines.next()
    deadlines.timed_out(first)  # the full deadline spends no grace
    with_grace = Deadline(1 + GRACE_FRACTION * 20, 20, grace_s=GRACE_FRACTION * 20)
    assert [deadlines.next() for _ in range(3)] == [with_grace] * 3  # answered calls spend nothing
    assert not hasattr(deadlines, "answered")  # nothing to tell it how long an answer took
    deadlines.timed_out(with_grace)
    assert [deadlines.next() for _ in range(3)] == [Deadline(1, 20)] * 3  # the grace is spent: the floor
    deadlines.timed_out(Deadline(1, 20))
    assert deadlines.next() == Deadline(1, 20)
    assert deadlines.next(full_s=0.5) == Deadline(0.5, 0.5)  # never more than the call's own full deadline


def test_a_grace_partly_spent_leaves_the_rest_for_later_calls():
    deadlines = CallDeadlines(full_s=20, after_timeout_s=3)
    deadlines.timed_out(deadlines.next())
    assert deadlines.next(full_s=5) == Deadline(5, 5, grace_s=2)  # a call's own full deadline caps it
    deadlines.timed_out(deadlines.next(full_s=5))
    assert deadlines.next() == Deadline(5, 20, grace_s=2)  # 4 s of grace, 2 spent


def test_the_cpu_budget_is_the_deadline_times_the_sandboxs_cpu_share():
    assert Deadline(20, 20, cpus=2).cpu_s == 40 and Deadline(20, 20, cpus=0.5).cpu_s == 10
    assert CallDeadlines(full_s=20, after_timeout_s=1, cpus=2).next() == Deadline(20, 20, 2)


def test_a_deadline_says_what_applied_and_why_it_was_shortened():
    assert Deadline(20, 20).describe() == "its 20 s deadline"
    assert Deadline(1, 20).describe() == "its 1 s deadline (shortened from 20 s after an earlier call timed out)"
    assert Deadline(1.25, 20).describe(" while importing the submission") == \
        "its 1.25 s deadline while importing the submission (shortened from 20 s after an earlier call timed out)"


@pytest.mark.parametrize("full, after", [(0, 1), (20, 0), (20, -1)])
def test_a_deadline_that_is_not_positive_is_refused_by_name(full, after):
    with pytest.raises(ValueError, match="call deadlines must be positive"):
        CallDeadlines(full_s=full, after_timeout_s=after)


# ------------------------------------------------------------------ which clock ends a call


def run_clock(deadline: Deadline, cpu_per_s: float | None, waited_per_s: float | None, *, cpu_rate: float = 1.0,
              until: float = 1000.0):
    """Drive a CallClock as the client does, on a sandbox that uses ``cpu_per_s`` CPU-seconds and waits
    ``waited_per_s`` seconds for a CPU per second of the clock; the expiry, or None if it lasted ``until``."""
    def at(t: float) -> Sample:
        return Sample(100 + t, None if cpu_per_s is None else 5 + cpu_per_s * t,
                      None if waited_per_s is None else 7 + waited_per_s * t)

    clock, t = CallClock(deadline, at(0), cpu_rate), 0.0
    while t < until:
        expiry = clock.expired(at(t))
        if expiry is not None:
            return expiry
        look = clock.next_look(at(t))
        assert deadlines_module.MIN_LOOK_S <= look <= deadlines_module.MAX_LOOK_S
        t += look
    return None


def test_a_busy_call_ends_when_its_cpu_budget_is_spent():
    expiry = run_clock(Deadline(20, 20), cpu_per_s=1.0, waited_per_s=0.0)
    assert expiry.clock is Clock.CPU and expiry.cpu_s == pytest.approx(20, abs=0.05)
    assert expiry.describe().startswith(": it used 20.0 of its 20 CPU-seconds (20")
    # One busy thread's CPU time trails its own time a little (the kernel's bookkeeping, a moment off the
    # CPU): the ceiling's margin lets the budget, not the ceiling, end it.
    assert run_clock(Deadline(20, 20), cpu_per_s=0.95, waited_per_s=0.0).clock is Clock.CPU
    assert run_clock(Deadline(1, 20), cpu_per_s=0.95, waited_per_s=0.0).clock is Clock.CPU


def test_a_busy_host_does_not_shorten_a_call_the_cpu_budget_decides():
    """Load 52 on 2 cores: the sandbox gets 1/26 of a CPU and waits the rest. An honest call needing
    5 CPU-seconds takes 130 s by the clock, and is not cut; a busy loop ends by its CPU budget (or the hard
    limit, 8x the deadline), never at 20 s by the clock."""
    share = 1 / 26
    assert run_clock(Deadline(20, 20), cpu_per_s=share, waited_per_s=1 - share, until=5 / share) is None
    hang = run_clock(Deadline(20, 20), cpu_per_s=share, waited_per_s=1 - share)
    assert hang.clock is Clock.HARD and hang.elapsed_s == pytest.approx(20 * HARD_FACTOR, abs=0.05)
    assert "the hard limit of 160 s by the clock (8x the deadline)" in hang.describe()
    half = run_clock(Deadline(20, 20), cpu_per_s=0.5, waited_per_s=0.5)  # load 4 on 2 cores
    assert half.clock is Clock.CPU and half.elapsed_s == pytest.approx(40, abs=0.05)


def test_the_sandboxs_own_forks_spend_its_cpu_budget_and_stretch_nothing():
    """100 busy processes in a 1-CPU quota: each waits 99% of the time, so the ceiling hardly moves; the CPU
    they share is 1 per second, and the budget ends the call at 20 s."""
    expiry = run_clock(Deadline(20, 20), cpu_per_s=1.0, waited_per_s=0.99)
    assert expiry.clock is Clock.CPU and expiry.elapsed_s == pytest.approx(20, abs=0.05)
    local = run_clock(Deadline(20, 20), cpu_per_s=8.0, waited_per_s=0.0, cpu_rate=8)  # no quota: 8 cores busy
    assert local.clock is Clock.CPU and local.elapsed_s == pytest.approx(2.5, abs=0.05)


def test_a_busy_call_ends_on_its_cpu_budget_even_where_its_own_time_passes_the_ceiling_first():
    """The hostile corpus's busy loop on a loaded machine: the kernel counts a thread's wait for a CPU only
    once it gets one, so at a look the current wait is missing and its own time runs ahead of its CPU time
    (2.7 CPU-seconds in 3.3 s of its own, once). A call using at least half the CPU its share allows is busy:
    the wall-clock ceiling is not for it."""
    expiry = run_clock(Deadline(20, 20), cpu_per_s=0.24, waited_per_s=0.7)
    assert expiry.clock is Clock.CPU and expiry.elapsed_s == pytest.approx(20 / 0.24, abs=0.05)
    assert run_clock(Deadline(20, 20), cpu_per_s=0.6, waited_per_s=0.0).clock is Clock.CPU
    idle = run_clock(Deadline(20, 20), cpu_per_s=0.3, waited_per_s=0.0)  # mostly asleep
    assert idle.clock is Clock.WALL and idle.elapsed_s == pytest.approx(22, abs=0.05)
    two = run_clock(Deadline(20, 20, cpus=2), cpu_per_s=0.8, waited_per_s=0.0, cpu_rate=2)  # 2 CPUs: 0.8 is idle
    assert two.clock is Clock.WALL


def test_a_sleeping_call_ends_at_the_wall_clock_ceiling():
    expiry = run_clock(Deadline(20, 20), cpu_per_s=0.0, waited_per_s=0.0)
    assert expiry.clock is Clock.WALL and expiry.elapsed_s == pytest.approx(20 * WALL_MARGIN, abs=0.05)
    assert expiry.describe() == ": the wall-clock ceiling of 22 s passed with 0.0 CPU-seconds used"


def test_time_waited_for_a_cpu_is_not_counted_toward_the_ceiling_and_the_message_says_how_much():
    expiry = run_clock(Deadline(20, 20), cpu_per_s=0.1, waited_per_s=0.5)  # a call that mostly blocks
    assert expiry.clock is Clock.WALL and expiry.elapsed_s == pytest.approx(44, abs=0.05)
    assert expiry.describe() == (": the wall-clock ceiling of 22 s passed with 4.4 CPU-seconds used; "
                                 "22.0 s it waited for a CPU not counted")


def test_where_the_sandboxs_clocks_cannot_be_read_the_ceiling_is_the_plain_wall_clock():
    expiry = run_clock(Deadline(20, 20), cpu_per_s=None, waited_per_s=None)
    assert expiry.clock is Clock.WALL and expiry.elapsed_s == pytest.approx(22, abs=0.05)
    assert expiry.describe() == (": the wall-clock ceiling of 22 s passed (the sandbox's CPU time could not "
                                 "be read here)")


def test_a_counter_that_stops_being_readable_counts_as_not_grown():
    clock = CallClock(Deadline(2, 2), Sample(0, 10.0, 3.0))
    assert clock.expired(Sample(1.5, None, None)) is None  # no CPU grown, no time waited: 1.5 s of its own
    assert clock.expired(Sample(2.2, None, None)).clock is Clock.WALL


def test_the_client_looks_no_later_than_a_clock_could_run_out():
    clock = CallClock(Deadline(1, 20), Sample(0, 0.0, 0.0), cpu_rate=2)
    assert clock.next_look(Sample(0, 0.0, 0.0)) == 0.5  # 1 CPU-second at 2 per second
    assert clock.next_look(Sample(1.0, 0.0, 0.0)) == pytest.approx(0.1)  # the ceiling (1.1 s) is 0.1 s away
    assert clock.next_look(Sample(0.999, 0.999, 0.0)) == deadlines_module.MIN_LOOK_S  # never a busy spin


def test_the_load_average_plays_no_part(monkeypatch):
    """Today's main stretched every deadline by the 1-minute load average per core: 100 busy forks raised it
    from 6 to 52 and stretched their own and a batch neighbour's deadlines 8x."""
    def busy_machine():
        return (52.0, 52.0, 52.0)

    monkeypatch.setattr("os.getloadavg", busy_machine)
    assert CallDeadlines(full_s=20, after_timeout_s=1).next() == Deadline(20, 20)
    assert run_clock(Deadline(20, 20), cpu_per_s=0.0, waited_per_s=0.0).elapsed_s == pytest.approx(22, abs=0.05)


# ------------------------------------------------------------------ fakes


#: A well-formed hello (grader.wire.selfreport validates every field) from a torch that is not there.
HELLO = {"type": "hello", "torch": "0.0-fake", "python": "3", "cuda": False, "cuda_version": None, "gpus": 0,
         "forbidden_missing": [], "forbidden_packages": [], "rlimits_applied": [], "rlimits_failed": {}, "no_exec": True}


class FakeClock:
    """The monotonic clock of one test: it moves only when a fake worker spends time."""

    def __init__(self):
        self.now = 1000.0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        return self.now

    def advance_to(self, t: float) -> None:
        with self._lock:
            self.now = max(self.now, t)


class FakeMeter(Meter):
    def __init__(self, worker: "FakeWorker"):
        self.worker = worker

    def sample(self):
        return self.worker.cpu_s, 0.0


class FakeWorker(Transport):
    """Greets, then does what ``script[probe]`` says: a value to return, "hang" (a busy loop: the clock's
    time is charged to its CPU), "sleep" (no CPU), "die", "hang at import" or "die at import" (the first
    call of a worker imports the submission), or ("slow", seconds, value): answers after that long busy."""

    def __init__(self, script: dict, clock: FakeClock):
        self.script = script
        self.clock = clock
        self.received: list[dict] = []
        self.closed = False
        self.cpu_s = 0.0
        self._imported = False
        self._dead = False
        self._busy = False
        self._out = bytearray(protocol.encode(HELLO))

    def send(self, data: bytes) -> None:
        assert not self.closed, "sent to a closed worker"
        message = protocol.decode(data[protocol.FRAME_HEADER_BYTES:])
        self.received.append(message)
        if message["type"] == "warm":
            self._out += protocol.encode({"type": "warmed"})
        if message["type"] != "call":
            return
        action = self.script[message["probe"]]
        if not self._imported:
            self._out += protocol.encode({"type": "importing"})
            if action in ("hang at import", "die at import"):
                self._dead, self._busy = action == "die at import", True
                return
            self._imported = True
            self._out += protocol.encode({"type": "imported"})
        if action in ("hang", "sleep", "die"):
            self._dead, self._busy = action == "die", action == "hang"
            return
        if isinstance(action, tuple) and action[0] == "slow":
            self.cpu_s += action[1]
            self.clock.advance_to(self.clock.now + action[1])
            action = action[2]
        self._out += protocol.encode({"type": "result", "id": message["id"], "ok": True, "value": action})

    def read(self, n: int, deadline: float) -> bytes:
        if self._out:
            data = bytes(self._out[:n])
            del self._out[:n]
            return data
        if self._dead or self.closed:
            return b""
        if self._busy:
            self.cpu_s += max(0.0, deadline - self.clock.now)
        self.clock.advance_to(deadline)  # a real transport waits until `deadline` first
        raise TimeoutError

    def meter(self) -> Meter:
        return FakeMeter(self)

    def exit_reason(self) -> str:
        return "exit code 0"

    def close(self) -> None:
        self.closed = True


class Starter:
    """The sandbox's ``start_transport``: records every worker it starts, in order."""

    def __init__(self, script: dict, clock: FakeClock | None = None):
        self.script = script
        self.clock = clock or FakeClock()
        self.workers: list[FakeWorker] = []
        self.failing: set[int] = set()  # which starts (0 = the first) fail, as an engine refusing would
        self._starts = 0
        self._lock = threading.Lock()

    def __call__(self) -> FakeWorker:
        with self._lock:
            n, self._starts = self._starts, self._starts + 1
            if n in self.failing:
                raise OSError("the engine refused")
            worker = FakeWorker(self.script, self.clock)
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


SCRIPT = {"ok": 1, "hang": "hang", "sleep": "sleep", "die": "die", "hang at import": "hang at import",
          "die at import": "die at import", "slow": ("slow", 19.0, 2)}


@pytest.fixture
def box():
    opened = []

    def open_(**kwargs) -> tuple[Sandbox, Starter]:
        starter = Starter(dict(SCRIPT))
        # The grace and floor rule alone: the grading's hang allowance (its own test, below) out of the way.
        kwargs.setdefault("hang_allowance_s", 1000.0)
        sandbox = Sandbox(starter, call_timeout_s=20, call_timeout_after_timeout_s=1, clock=starter.clock, **kwargs)
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
    assert first.failure is Failure.TIMEOUT and first.deadline_s == 20 and first.timed_out_by is Clock.CPU
    assert first.failure_message == "a call ran past its 20 s deadline: it used 20.0 of its 20 " \
                                    "CPU-seconds (20 s by the clock)"
    second = sandbox.call("sleep")  # the floor (1 s) and the grace (4 s)
    assert second.failure is Failure.TIMEOUT and second.deadline_s == 5 and second.timed_out_by is Clock.WALL
    assert second.failure_message == ("a call ran past its 5 s deadline (shortened from 20 s after an "
                                      "earlier call timed out): the wall-clock ceiling of 5.5 s passed with 0.0 "
                                      "CPU-seconds used")
    third = sandbox.call("sleep")  # the grace is spent
    assert third.deadline_s == 1 and third.failure_message == (
        "a call ran past its 1 s deadline (shortened from 20 s after an earlier call timed out): the "
        "wall-clock ceiling of 1.1 s passed with 0.0 CPU-seconds used")
    assert third.probe == "sleep"  # the probe is named in a field, for the panel; messages never name it
    assert sandbox.call("ok").value == 1  # an answer still comes back under the short deadline
    assert sandbox.deadline_warnings == []  # every deadline was charged to the sandbox's own clocks


@pytest.mark.parametrize("hang, clock", [("hang", Clock.CPU), ("sleep", Clock.WALL)])
def test_a_slow_first_answer_does_not_lengthen_the_deadlines_after_a_timeout(box, hang, clock):
    """The attack, end to end on the fake clock: a first call answering in 19 s, then a hang in every call
    (busy, or asleep). Today's main gave each later hang 20 s (302 s for the grading); here each gets 1 s,
    and a file that hangs on every check of attention (17 checks) spends under 60 s in calls, whatever its
    first call did."""
    sandbox, starter = box()
    assert sandbox.call("slow").value == 2
    began = starter.clock.now
    timeouts = [sandbox.call(hang) for _ in range(16)]
    assert [t.deadline_s for t in timeouts] == [20, 5] + [1] * 14
    assert all(t.failure is Failure.TIMEOUT and t.timed_out_by is clock for t in timeouts)
    hanging = starter.clock.now - began
    assert hanging <= (20 + 5 + 14 * 1) * WALL_MARGIN + 16 * deadlines_module.MIN_LOOK_S < 45


def test_after_a_timeout_an_honest_call_as_costly_as_a_fresh_workers_first_keeps_room(box):
    """A fresh worker's first call pays lazy imports: 1.6 CPU-seconds for param_groups' and checkpoint_resume's
    references, measured. After one hang, such a call still answers: the grace covers it, and an answer
    spends none of it."""
    sandbox, starter = box()
    starter.script["first call"] = ("slow", 1.7, "answered")
    assert sandbox.call("hang").timed_out_by is Clock.CPU
    assert [sandbox.call("first call").value for _ in range(5)] == ["answered"] * 5


def test_a_slow_import_under_a_shortened_deadline_is_a_timeout_of_that_call_not_a_file_that_does_not_import(box):
    sandbox, starter = box()
    sandbox.call("hang")
    slow = sandbox.call("hang at import")
    assert slow.failure is Failure.TIMEOUT and not slow.during_import
    assert slow.failure_message == ("a call ran past its 5 s deadline while importing the "
                                    "submission (shortened from 20 s after an earlier call timed out): it used 5.0 "
                                    "of its 5 CPU-seconds (5 s by the clock)")
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


def test_a_transport_without_clocks_is_timed_by_the_wall_clock_and_the_report_is_told_why(box):
    class Unmetered(FakeWorker):
        def meter(self) -> Meter:
            return Transport.meter(self)

    clock = FakeClock()
    sandbox = Sandbox(lambda: Unmetered(SCRIPT, clock), call_timeout_s=20, clock=clock, spares=0,
                      hang_allowance_s=1000.0)
    try:
        hung = sandbox.call("hang")
        assert hung.timed_out_by is Clock.WALL and clock.now - 1000.0 == pytest.approx(22, abs=0.01)
        assert hung.failure_message.endswith("(the sandbox's CPU time could not be read here)")
        assert sandbox.deadline_warnings == [
            "call deadlines were measured by the wall clock, not in the sandbox's CPU time (this sandbox "
            "transport reads no CPU time): a busy machine may have cut a slow call short"]
    finally:
        sandbox.close()


# ------------------------------------------------------------------ spares


def test_an_honest_grading_boots_no_spare(box):
    sandbox, starter = box()
    for _ in range(5):
        assert sandbox.call("ok").value == 1
    sandbox.close()
    assert len(starter.workers) == 1 and starter.workers[0].closed and sandbox.starts == 1


def not_warm_up(worker: FakeWorker) -> list[dict]:
    """What a worker received besides the warm-up a spare gets before service."""
    return [m for m in worker.received if m["type"] != "warm"]


def test_after_a_loss_spares_boot_ahead_and_none_receives_anything_before_it_is_taken_into_service(box):
    sandbox, starter = box()
    assert sandbox.call("hang").failure is Failure.TIMEOUT
    first, *spares = starter.wait_for(3)
    assert calls(first) == ["hang"]
    assert all(not_warm_up(spare) == [] for spare in spares)  # booted (greeted), warmed at most

    assert sandbox.call("ok").value == 1
    in_service = [s for s in spares if calls(s)]
    assert len(in_service) == 1 and calls(in_service[0]) == ["ok"]
    idle = [s for s in spares if s is not in_service[0]]
    assert not_warm_up(idle[0]) == []  # still nothing: it is not in service

    sandbox.close()
    assert all(w.closed for w in starter.workers)
    assert all(not_warm_up(w) == [] for w in starter.workers if w not in (first, in_service[0]))  # no shutdown
    assert sandbox.starts == 2  # workers taken into service, not the spares closed unused


def test_a_spare_is_warmed_up_before_service_and_the_first_worker_is_not(box):
    """torch's lazy imports (1.8 CPU-seconds at an optimizer's first step) are paid by a spare before it is
    taken into service: the calls after a loss may run under the shortened deadline. The first worker's
    calls have the full deadline; an honest grading pays nothing more."""
    sandbox, starter = box()
    assert sandbox.call("hang").failure is Failure.TIMEOUT
    assert sandbox.call("ok").value == 1
    first, *rest = starter.workers
    assert [m["type"] for m in first.received] == ["call"]
    in_service = next(w for w in rest if calls(w))
    assert [m["type"] for m in in_service.received] == ["warm", "call"]


def test_starts_counts_the_workers_taken_into_service(box):
    sandbox, starter = box()
    for _ in range(3):
        assert sandbox.call("die").failure is Failure.CRASH
    assert sandbox.call("ok").value == 1
    sandbox.close()
    assert sandbox.starts == 4
    assert len(starter.workers) > 4  # two spares kept booting ahead; the unused ones are not counted
    assert sum(1 for w in starter.workers if calls(w)) == 4


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
        booted.append(FakeWorker(SCRIPT, FakeClock()))
        return booted[-1]

    spares = Spares(slow_boot, FakeWorker.close, count=2)
    spares.fill()
    threading.Timer(0.1, release.set).start()  # let them finish while close() waits
    spares.close()
    assert len(booted) == 2 and all(w.closed for w in booted)
    spares.fill()
    assert spares.take() is None  # a closed pool boots nothing more


def test_a_taken_spare_is_the_callers_and_is_not_closed_with_the_rest():
    spares = Spares(lambda: FakeWorker(SCRIPT, FakeClock()), FakeWorker.close, count=2)
    spares.fill()
    mine = spares.take().result()
    spares.close()
    assert not mine.closed and mine.received == []


def test_the_calls_that_time_out_share_an_allowance_by_the_clock_whatever_the_load():
    """However busy the host, a file that hangs on every call costs the allowance at most: no call runs past
    what is left of it (its hard limit), and once it is spent the later calls are not tried, said so."""
    from grader.backends.deadlines import HANG_ALLOWANCE_S

    deadlines = CallDeadlines(full_s=20, after_timeout_s=1)
    first = deadlines.next()
    assert first.hard_s == HANG_ALLOWANCE_S < 20 * HARD_FACTOR  # a starved first hang ends at the allowance
    deadlines.timed_out(first, elapsed_s=HANG_ALLOWANCE_S - 3)
    assert deadlines.next().hard_s == pytest.approx(3) and not deadlines.spent
    deadlines.timed_out(deadlines.next(), elapsed_s=3)
    assert deadlines.spent
    assert deadlines.not_tried() == (f"not tried: this grading's calls that timed out had taken the "
                                     f"{HANG_ALLOWANCE_S:g} s it allows them (2 timed out), so the rest time out "
                                     "without running")
    hang = run_clock(deadlines.next() if False else Deadline(20, 20, allowance_s=3), cpu_per_s=0.3,
                     waited_per_s=0.7)
    assert hang.clock is Clock.HARD and "what was left of the grading's time for calls that time out" in \
        hang.describe()
