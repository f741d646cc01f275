"""The judge's end of a sandbox's worker server: one container (or local process), a fresh worker on demand.

The sandbox runs one worker server (``grader.sandbox.worker_server``); each worker it forks is a
:class:`ServedWorker`, a transport over the server's one channel. After a timeout or a crash the
judge asks the same server for a fresh worker (milliseconds) instead of starting a sandbox; a
server that no longer answers is replaced by a new one. Frames of the server itself (its magic,
``protocol.SERVER_MAGIC``) are read here, never passed on: a worker's end (``lost``) reads as the
end of that worker's stream, said in the judge's words; the server's own end, which nothing the
candidate runs can cause in a container, is infrastructure: the grading is not graded, rerun.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

from grader.backends.accounting import Meter
from grader.backends.client import SandboxStartError, Transport
from grader.wire import protocol

#: How long the judge waits for a fresh worker (a fork; the first replacement also imports torch's lazy parts).
FRESH_TIMEOUT_S = 60.0


class ServerLost(SandboxStartError):
    """The sandbox's worker server ended or broke its protocol: infrastructure, so the grading is not graded."""


def _lost_words(message: dict) -> str:
    """A worker's end, as the server reported it (plain fields, checked), in the judge's words."""
    signal, code, why = message.get("signal"), message.get("exit"), message.get("why")
    if why == "protocol":
        how = "it wrote something other than a frame to the protocol channel"
    elif why == "too_large" and type(message.get("size")) is int:
        how = f"it sent a {message['size'] / 2 ** 20:.1f} MB frame, over the exercise's limit"
    elif type(signal) is int:
        how = "killed (the memory limit, or a kill)" if signal == 9 else f"killed by signal {signal}"
    elif type(code) is int:
        how = f"exit code {code}"
    else:
        how = "it ended"
    return how + (" in the middle of a frame" if message.get("midframe") is True else "")


class WorkerServer:
    """One server: its transport, and which of its workers is current."""

    def __init__(self, transport: Transport, *, single: bool = False, max_frame_bytes: int = protocol.MAX_FRAME_BYTES):
        self.transport = transport
        self.max_frame_bytes = max_frame_bytes  # what the server refuses a worker's frame over
        self.single = single  # its one worker is the server itself: its end is that worker's, not infrastructure
        self.generation = 0
        self.alive = True
        self.current: ServedWorker | None = None  # the worker whose frames come now: the rest of one is skipped

    def _read_exactly(self, n: int, deadline: float) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.transport.read(n - len(out), deadline)
            if not chunk:
                self.alive = False
                raise ServerLost(f"the sandbox's worker server ended ({self.transport.exit_reason()})")
            out += chunk
        return bytes(out)

    def read_server_frame(self, length: int, deadline: float) -> dict:
        if length > 1024 * 1024:
            self.alive = False
            raise ServerLost("the sandbox's worker server sent an oversized frame of its own")
        try:
            return protocol.decode(self._read_exactly(length, deadline))
        except protocol.ProtocolError as e:
            self.alive = False
            raise ServerLost(f"the sandbox's worker server broke its protocol ({e})") from None

    def next_worker(self, *, ask: bool, timeout_s: float = FRESH_TIMEOUT_S) -> "ServedWorker":
        """The next worker: the first, which the server forks when it starts, or (``ask``) a fresh one. What the
        old worker still had in flight is read and dropped on the way."""
        deadline = time.monotonic() + timeout_s
        if ask:
            self.transport.send(protocol.encode({"type": protocol.Kind.FRESH}, magic=protocol.SERVER_MAGIC))
        left = self.current._left if self.current is not None else 0  # a frame the judge refused from its header
        while left:
            left -= len(self._read_exactly(min(left, 1024 * 1024), deadline))
        self.current = None
        wanted = self.generation + 1
        while True:
            magic, length = protocol.read_header(lambda n: self._read_exactly(n, deadline))
            if magic == protocol.SERVER_MAGIC:
                message = self.read_server_frame(length, deadline)
                if message.get("type") == protocol.Kind.FATAL:
                    self.alive = False
                    raise SandboxStartError("the sandbox's worker server failed (what it wrote about it is the "
                                            "sandbox's words, not repeated)")
                if message.get("type") == protocol.Kind.WORKER and message.get("generation") == wanted:
                    self.generation = wanted
                    self.current = ServedWorker(self, wanted)
                    return self.current
            elif magic == protocol.MAGIC:  # the old worker's last words: dropped unread
                left = length
                while left:
                    left -= len(self._read_exactly(min(left, 1024 * 1024), deadline))
            else:
                self.alive = False
                raise ServerLost("the sandbox's channel carried something other than frames")

    def close(self) -> None:
        self.alive = False
        try:
            self.transport.send(protocol.encode({"type": protocol.Kind.SHUTDOWN}, magic=protocol.SERVER_MAGIC))
        except Exception:
            pass
        self.transport.close()


class ServedWorker(Transport):
    """One worker of a server: its frames pass through whole; its end reads as the end of its stream."""

    def __init__(self, server: WorkerServer, generation: int):
        self.server, self.generation = server, generation
        self._left = 0  # bytes of the current frame not passed on yet
        self._head = b""  # a frame header read ahead, not passed on yet
        self._lost: dict | None = None

    def send(self, data: bytes) -> None:
        if self.generation != self.server.generation or self._lost is not None:
            raise BrokenPipeError("this worker was replaced")
        try:
            self.server.transport.send(data)
        except OSError:  # the server's channel is closed: its end, found on a send rather than a read
            self.server.alive = False
            self._server_ended()
            raise

    def _server_ended(self) -> bytes:
        """The server's channel ended. Where that is the worker's doing (the server was the one worker, or the
        sandbox's memory limit took it with the worker), it reads as this worker's end; else infrastructure."""
        if self.server.single or self.server.transport.ended_by_its_limits():
            self._lost = {"why": "ended"}
            return b""
        raise ServerLost(f"the sandbox's worker server ended ({self.server.transport.exit_reason()})")

    def read(self, n: int, deadline: float) -> bytes:
        if self._lost is not None:
            return b""
        while not self._left and not self._head:
            try:
                magic, length = protocol.read_header(lambda k: self.server._read_exactly(k, deadline))
            except ServerLost:
                return self._server_ended()
            if magic == protocol.SERVER_MAGIC:
                message = self.server.read_server_frame(length, deadline)
                if message.get("type") == protocol.Kind.LOST and message.get("generation") == self.generation:
                    self._lost = message
                    if message.get("why") == "too_large" and type(message.get("size")) is int:
                        raise protocol.FrameTooLarge(message["size"], self.server.max_frame_bytes)
                    if message.get("why") == "protocol":
                        raise protocol.ProtocolError("the worker wrote something other than a frame to its channel")
                    return b""
                continue  # another worker's news: not this one's
            if magic != protocol.MAGIC:  # only what the candidate runs shares the sandbox with the server
                self.server.alive = False
                raise protocol.ProtocolError("something in the sandbox wrote to its channel other than in frames")
            self._head, self._left = protocol.frame_header(magic, length), length
        if self._head:
            out, self._head = self._head[:n], self._head[n:]
            return out
        data = self.server.transport.read(min(n, self._left), deadline)
        if not data:
            self.server.alive = False
            return self._server_ended()
        self._left -= len(data)
        return data

    def exit_reason(self) -> str:
        if self._lost is not None and not self.server.alive:  # it ended with the server (one worker, memory)
            return self.server.transport.exit_reason()
        if self._lost is not None:
            return _lost_words(self._lost)
        return "the worker was replaced"

    def meter(self) -> Meter:
        return self.server.transport.meter()

    def close(self) -> None:
        """A worker is closed by the next one's start (or the sandbox's end): nothing to do alone."""


class ServedStarter:
    """What a backend hands the :class:`~grader.backends.client.Sandbox`: each call, the next worker (the current
    server's fresh one, or a new server's first when none answers); :meth:`close` ends the server. Workers come
    one at a time (``one_at_a_time``): the sandbox boots none ahead, since a fresh one is a fork away.
    ``first``: a server started ahead for this grading (``grader.backends.prestart``), taken for the first."""

    one_at_a_time = True

    def __init__(self, start_server: Callable[[], Transport], *, first: Callable[[], Transport] | None = None,
                 single: bool = False):
        self._start_server, self._first, self._single = start_server, first, single
        self._server: WorkerServer | None = None
        self._lock = threading.Lock()

    def __call__(self) -> Transport:
        with self._lock:
            server = self._server
            if server is not None and self._single:  # its one worker is done: so is it
                server.close()
            elif server is not None and server.alive:
                try:
                    return server.next_worker(ask=True)
                except (OSError, EOFError, protocol.ProtocolError, SandboxStartError):
                    server.close()
            begin, self._first = self._first or self._start_server, None
            server = self._server = WorkerServer(begin(), single=self._single)
            try:
                return server.next_worker(ask=False)
            except BaseException:
                server.close()
                self._server = None
                if begin is not self._start_server:  # the one started ahead would not do: start one now
                    return self.__call__()
                raise

    def close(self) -> None:
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.close()
