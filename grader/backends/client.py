"""The judge's handle on a sandbox: start a worker, call probes, survive whatever happens.

Like pytest's ``CallInfo``, every call is a value (``CallResult``): the probe's data, the candidate's
exception, or why there is no answer (timeout, crash, protocol violation), plus output and timing. The
sandbox restarts after a crash or timeout (a spare, ``grader.backends.booting``), so one bad call fails
one check; deadlines are charged to the sandbox's clocks and shorten after a timeout
(``grader.backends.deadlines``). An import that raises, crashes or hangs is remembered: later calls fail
the same way at once. A reply over ``[limits] result_mb`` is refused from its frame header, unread.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

from grader.wire import protocol
from grader.errors import GraderError
from grader.backends.booting import SPARES, Booting, Spares
from grader.backends.call_result import CallResult, Failure, result_from_reply
from grader.backends.accounting import Meter, NoMeter, deadline_warnings
from grader.backends.deadlines import (HANG_ALLOWANCE_S, CallClock, CallDeadlines, Clock, Deadline, Expiry,
                                       Sample)
from grader.wire.selfreport import MalformedSelfReport, SandboxHello, read_hello


class Transport:
    """A started worker: bytes in, bytes out, and a way to end it. Backends implement this."""

    def send(self, data: bytes) -> None:
        raise NotImplementedError

    def read(self, n: int, deadline: float) -> bytes:
        """Up to ``n`` bytes; b"" at end of stream; TimeoutError past ``deadline`` (monotonic)."""
        raise NotImplementedError

    def exit_reason(self) -> str:
        """Why the worker ended (exit code, OOM...), asked after it died."""
        return "the worker exited"

    def ended_by_its_limits(self) -> bool:
        """It ended because the sandbox's own limits ran out (memory; under gVisor, pids too): the candidate's
        doing, never infrastructure."""
        return False

    def meter(self) -> Meter:
        """The worker's own clocks, read from outside it (``grader.backends.accounting``); asked once, after
        its hello. The default reads none: every deadline is then the wall clock's, and the report says so."""
        return NoMeter("this sandbox transport reads no CPU time")

    def close(self) -> None:
        """Stop and remove the worker. Must be safe to call twice and after a crash."""
        raise NotImplementedError


@dataclass
class Worker:
    """A started worker that has greeted: its transport, what its hello said, and its clocks."""

    transport: Transport
    hello: SandboxHello
    meter: Meter


class Sandbox:
    """Calls probes in a worker started by ``start_transport``; replaces it after a failure.

    Call deadlines come from :class:`~grader.backends.deadlines.CallDeadlines` (shortened
    once a call has timed out) and are watched on each worker's own clocks
    (:class:`~grader.backends.deadlines.CallClock`); replacement workers from
    :class:`~grader.backends.booting.Spares` (booted ahead once one is lost). ``cpus`` is
    the sandbox's CPU share: a call's CPU budget is its deadline times it. ``clock`` is
    the monotonic clock transports wait on (injected by tests).
    """

    def __init__(self, start_transport: Callable[[], Transport], *, call_timeout_s: float,
                 call_timeout_after_timeout_s: float = 1.0, cpus: float = 1.0, start_timeout_s: float = 120.0,
                 max_frame_bytes: int = protocol.MAX_FRAME_BYTES, spares: int = SPARES,
                 sweep: Callable[[], object] | None = None, clock: Callable[[], float] = time.monotonic,
                 start_first: Callable[[], Transport] | None = None, hang_allowance_s: float = HANG_ALLOWANCE_S):
        self._start_transport = start_transport
        self._start_first = start_first
        self._sweep = sweep
        self._clock = clock
        self.call_timeout_s = call_timeout_s
        self.max_frame_bytes = max_frame_bytes
        self.start_timeout_s = start_timeout_s
        self.hello: SandboxHello | None = None
        self.starts = 0  # workers taken into service (a spare closed unused is not counted)
        #: Why some deadline could not be charged to the sandbox's own clocks (for the report), once each.
        self.deadline_warnings: list[str] = []
        self._deadlines = CallDeadlines(full_s=call_timeout_s, after_timeout_s=call_timeout_after_timeout_s,
                                        cpus=cpus, allowance_s=hang_allowance_s)
        if getattr(start_transport, "one_at_a_time", False):  # a worker server's: the next is a fork away, and
            spares = 0  # asking for one ends the one in service
        self._close_transports = getattr(start_transport, "close", None)
        self._spares: Spares[Worker] = Spares(self._boot_spare, _close_worker, count=spares, boot_first=self._boot_first)
        self._worker: Worker | None = None
        self._import_failure: CallResult | None = None
        self._next_id = 0
        self._lock = threading.Lock()
        self._first: Booting[Worker] | None = None
        self._start_failure: SandboxStartError | None = None

    # ------------------------------------------------------------ lifecycle

    def start_in_background(self) -> None:
        """Begin starting the worker now (while pytest imports and collects)."""
        self._first = self._spares.boot()

    def _boot_first(self) -> Worker:
        """The grading's first worker: the one started ahead of the judge (``start_first``: it was started
        for this grading alone, see ``grader.backends.prestart``), taken over once; if there is none, or it
        does not greet, one started now as any other."""
        start_first, self._start_first = self._start_first, None
        if start_first is not None:
            try:
                return self._boot(start_first)
            except Exception:
                pass  # gone or broken while it waited: a fresh start says why, if it fails too
        return self._boot()

    def _boot(self, start_transport: Callable[[], Transport] | None = None) -> Worker:
        """Start a worker and read its hello; on any failure it is closed before the error goes up."""
        transport = (start_transport or self._start_transport)()
        try:
            deadline = self._clock() + self.start_timeout_s
            hello = protocol.read_frame(lambda n: transport.read(n, deadline), self.max_frame_bytes)
            if hello.get("type") == protocol.Kind.FATAL:
                raise SandboxStartError("the sandbox worker failed to start", detail=str(hello.get("message"))[-4000:])
            if hello.get("type") != protocol.Kind.HELLO:  # the sandbox's words are not repeated: it chose them
                raise protocol.ProtocolError("the worker's first message was not its hello")
            return Worker(transport, read_hello(hello), _meter_of(transport))
        except MalformedSelfReport as e:  # untrusted data of the wrong shape: this sandbox cannot grade
            transport.close()
            raise SandboxStartError(str(e)) from None
        except BaseException:
            transport.close()
            raise

    def _boot_spare(self) -> Worker:
        """A worker to replace a lost one, warmed up (``grader.sandbox.worker.warm_up``) before it is ready:
        the calls after a loss may run under the shortened deadline, and torch's lazy imports are no call's."""
        worker = self._boot()
        try:
            deadline = self._clock() + self.start_timeout_s
            worker.transport.send(protocol.encode({"type": protocol.Kind.WARM}))
            reply = protocol.read_frame(lambda n: worker.transport.read(n, deadline), self.max_frame_bytes)
            if reply.get("type") != protocol.Kind.WARMED:
                raise protocol.ProtocolError(f"expected warmed from the worker, got {reply.get('type')!r}")
            return worker
        except BaseException:
            worker.transport.close()
            raise

    def ensure_started(self) -> None:
        """Wait for a background start, or start now; raises if the sandbox cannot start.

        A start failure is infrastructure (engine, image, worker), not the candidate:
        it is remembered and raised again at once rather than retried for every check.
        """
        if self._start_failure is not None:
            raise self._start_failure
        try:
            self._ensure_started()
        except SandboxStartError as e:
            self._start_failure = e
            raise

    def _ensure_started(self) -> None:
        if self._worker is not None:
            return
        first, self._first = self._first, None
        try:
            worker = first.result() if first is not None else (
                self._spare() or (self._boot_spare() if self.starts else self._boot_first()))
        except BaseException as e:
            raise SandboxStartError(_describe_start_error(e), getattr(e, "detail", None)) from e
        self._worker, self.hello = worker, worker.hello
        self.starts += 1
        for warning in deadline_warnings(worker.meter):
            if warning not in self.deadline_warnings:
                self.deadline_warnings.append(warning)

    def _spare(self) -> Worker | None:
        """A spare booted ahead, or None. One that failed to boot is forgotten: a fresh start says why."""
        booting = self._spares.take()
        if booting is None:
            return None
        try:
            return booting.result()
        except Exception:
            return None

    def _lose_worker(self) -> None:
        """The worker in service is gone (or going): close it behind, and boot spares ahead for the next call."""
        worker, self._worker = self._worker, None
        if worker is not None:
            self._spares.retire(worker)
        if self._import_failure is None:
            self._spares.fill()
        else:
            self._spares.stop()  # every later call answers from the remembered failure

    def close(self) -> None:
        first, self._first = self._first, None
        if first is not None:
            first.discard()
        worker, self._worker = self._worker, None
        if worker is not None:
            try:
                worker.transport.send(protocol.encode({"type": protocol.Kind.SHUTDOWN}))
            except Exception:
                pass
            self._spares.retire(worker)
        self._spares.close()  # waits until every worker of this sandbox, spares included, is closed
        if self._close_transports is not None:  # a worker server: it ends, and its workers with it
            try:
                self._close_transports()
            except Exception:
                pass
        if self._sweep is not None:
            # The last net: a worker whose removal the engine refused (a fork bomb under load), or one
            # created but never started, is found by what it carries (its grading's label) and removed.
            try:
                self._sweep()
            except Exception:
                pass  # the engine is gone: the next grading's reaper removes it by its dead owner

    # ------------------------------------------------------------ calls

    def call(self, probe: str, args: tuple | list = (), kwargs: dict | None = None,
             *, timeout_s: float | None = None, already_bytes: int = 0) -> CallResult:
        """One probe call. ``already_bytes``: what this check received before, so this reply may
        bring at most ``max_frame_bytes - already_bytes`` (the check's result budget).
        ``timeout_s`` replaces the exercise's call deadline for this call (still shortened after a timeout)."""
        with self._lock:
            return self._call(probe, list(args), kwargs or {}, self._deadlines.next(timeout_s), already_bytes)

    def _call(self, probe: str, args: list, kwargs: dict, deadline: Deadline, already: int = 0) -> CallResult:
        if self._import_failure is not None:
            cached = self._import_failure
            return CallResult(probe, error=cached.error, failure=cached.failure, failure_message=cached.failure_message,
                              failure_cause=cached.failure_cause, during_import=True, timed_out_by=cached.timed_out_by)
        if self._deadlines.spent:  # the grading's time for calls that hang is spent: this one is not tried
            return CallResult(probe, failure=Failure.TIMEOUT, failure_message=self._deadlines.not_tried(),
                              failure_cause=self._deadlines.not_tried(), deadline_s=0.0, timed_out_by=Clock.HARD)
        self.ensure_started()
        transport, meter = self._worker.transport, self._worker.meter
        self._next_id += 1
        call_id = self._next_id
        frame = protocol.encode({"type": protocol.Kind.CALL, "id": call_id, "probe": probe, "args": args, "kwargs": kwargs})
        begun = self._sample(meter)
        watch = CallClock(deadline, begun, meter.cpu_rate)
        look = begun.wall_s + watch.next_look(begun)  # when to read the clocks next, if no answer comes first
        importing = False
        received = 0

        def check_clocks() -> None:
            """Raise :class:`_Expired` if a clock says the call is over; else set when to look again."""
            nonlocal look
            now = self._sample(meter)
            expiry = watch.expired(now)
            if expiry is not None:
                raise _Expired(expiry)
            look = now.wall_s + watch.next_look(now)

        def read(n: int) -> bytes:
            nonlocal received
            while True:
                try:
                    data = transport.read(n, look)
                except TimeoutError:  # no answer yet: read the clocks, then wait again
                    check_clocks()
                    continue
                received += len(data)
                if self._clock() >= look:  # a sandbox that trickles bytes is on the same clocks
                    check_clocks()
                return data

        def fail(failure: Failure, message: str, *, hung_import: bool | None = None,
                 by: Clock | None = None, cause: str = "") -> CallResult:
            return self._fail(probe, failure, message, importing if hung_import is None else hung_import,
                              begun.wall_s, deadline, by, cause)

        try:
            transport.send(frame)
            while True:
                reply = protocol.read_frame(read, max(0, self.max_frame_bytes - already))
                if reply.get("type") in (protocol.Kind.IMPORTING, protocol.Kind.IMPORTED):
                    importing = reply["type"] == protocol.Kind.IMPORTING
                    continue
                break
        except _Expired as e:
            self._deadlines.timed_out(deadline, e.expiry.elapsed_s)
            said = deadline.describe(" while importing the submission" if importing else "") + e.expiry.describe()
            # Only a hang under the full deadline says the import hangs; under a shortened one it may just be slow.
            return fail(Failure.TIMEOUT, f"a call ran past {said}",
                        hung_import=importing and not deadline.shortened, by=e.expiry.clock,
                        cause=deadline.describe() + e.expiry.describe())
        except (EOFError, ConnectionError, OSError):
            reason = transport.exit_reason()
            where = " while importing the submission" if importing else " during a call"
            return fail(Failure.CRASH, f"the sandbox died{where}: {reason}", cause=reason)
        except protocol.FrameTooLarge as e:  # the body is still coming: _fail retires the worker
            earlier = f", and {_megabytes(already)} had come back already" if already else ""
            return fail(Failure.TOO_LARGE,
                        f"the sandbox sent a {_megabytes(e.size)} result for a call; what one check may "
                        f"receive is limited to {_megabytes(self.max_frame_bytes)} for this exercise "
                        f"([limits] result_mb){earlier}")
        except protocol.ProtocolError as e:
            return fail(Failure.PROTOCOL, f"protocol violation during a call: {e}")
        if reply.get("type") != protocol.Kind.RESULT or reply.get("id") != call_id:
            return fail(Failure.PROTOCOL, f"expected the result of call {call_id}, got another message")
        elapsed = self._clock() - begun.wall_s
        result = result_from_reply(probe, reply, elapsed)
        result.received_bytes = received
        result.deadline_s = deadline.seconds
        if importing and result.error is not None:  # remembered: the same file imports the same way again
            result.during_import, self._import_failure = True, result
            self._spares.stop()
        return result

    def _sample(self, meter: Meter) -> Sample:
        """The clocks now: the monotonic one, and the worker's counters (None where unreadable)."""
        try:
            cpu, waited = meter.sample()
        except Exception:  # a meter never raises; if one did, this call is timed by the wall clock
            cpu = waited = None
        return Sample(self._clock(), cpu, waited)

    def _fail(self, probe: str, failure: Failure, message: str, hung_import: bool, started: float,
              deadline: Deadline, by: Clock | None = None, cause: str = "") -> CallResult:
        result = CallResult(probe, failure=failure, failure_message=message, failure_cause=cause,
                            duration_s=self._clock() - started, deadline_s=deadline.seconds, timed_out_by=by)
        if hung_import:
            result.during_import, self._import_failure = True, result
        self._lose_worker()  # the next call gets a spare, or a fresh worker
        return result


class _Expired(Exception):
    """A clock of the call's deadline ran out (raised inside the frame reader, caught by the call)."""

    def __init__(self, expiry: Expiry):
        super().__init__(expiry.clock.value)
        self.expiry = expiry


def _meter_of(transport: Transport) -> Meter:
    """The transport's meter; one that fails to make one leaves the worker on the wall clock, said why."""
    try:
        return transport.meter()
    except Exception as e:
        return NoMeter(f"the sandbox's clocks could not be found ({type(e).__name__})")


def _close_worker(worker: Worker) -> None:
    worker.transport.close()


class SandboxStartError(Exception):
    """The sandbox could not be started or did not greet: infrastructure, so the grading is not graded. ``detail``:
    the panel's (what the sandbox itself wrote), never part of the message."""

    def __init__(self, message: str, detail: str | None = None):
        super().__init__(message)
        self.detail = detail


def _describe_start_error(error: BaseException) -> str:
    if isinstance(error, SandboxStartError):
        return str(error)
    if isinstance(error, GraderError):  # already explained (a GPU the engine cannot give): say it as it is
        return str(error) + (f" {error.hint}" if error.hint else "")
    return f"the sandbox did not start: {type(error).__name__}: {error}"


def _megabytes(n: int) -> str:
    """A byte count in MB (MiB, as every ``*_mb`` limit), to one decimal where needed: "240 MB", "0.5 MB"."""
    return f"{n / (1024 * 1024):.1f}".removesuffix(".0") + " MB"
