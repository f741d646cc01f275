"""Workers outside service: booted ahead on threads, and closed behind on threads.

After a worker is lost the sandbox client asks for spares, booting on their own threads so the next
call finds one ready; a lost worker is closed on a thread too. A spare receives nothing of any check
before it is taken into service (it is only greeted and warmed up), spares are booted only after a
loss, and :meth:`Spares.close` waits for every one, so no container outlives its grading.
Generic over the worker type: the client boots ``(transport, hello)`` pairs; the tests boot fakes.
See docs/decisions/spare-workers.md.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

W = TypeVar("W")

#: How many spares a sandbox keeps booting once it has lost a worker: one per call in flight is not
#: enough, because a spare taken into service must be replaced while the next call runs.
SPARES = 2


class Booting(Generic[W]):
    """One worker booting on its own thread: ``result()`` waits for it; ``discard()`` gives it up."""

    def __init__(self, boot: Callable[[], W], retire: Callable[[W], None]):
        self._boot = boot
        self._retire = retire
        self._lock = threading.Lock()
        self._worker: W | None = None
        self._error: BaseException | None = None
        self._unwanted = False
        self._thread = threading.Thread(target=self._run, name="sandbox-boot", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            worker = self._boot()
        except BaseException as e:  # kept for result(); a thread has no one else to tell
            self._error = e
            return
        with self._lock:
            unwanted = self._unwanted
            if not unwanted:
                self._worker = worker
        if unwanted:
            self._retire(worker)

    def result(self) -> W:
        """The booted worker, now the caller's; raises what the boot raised."""
        self._thread.join()
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is None:
            raise self._error if self._error is not None else RuntimeError("this worker was taken or discarded")
        return worker

    def discard(self) -> None:
        """Not wanted: the worker is retired now if it has booted, or by its thread when it has. Does not wait."""
        with self._lock:
            self._unwanted = True
            worker, self._worker = self._worker, None
        if worker is not None:
            self._retire(worker)

    def join(self) -> None:
        self._thread.join()


class Spares(Generic[W]):
    """Spare workers for one sandbox, and the threads that close lost ones. Thread-safe."""

    def __init__(self, boot: Callable[[], W], close: Callable[[W], None], *, count: int = SPARES,
                 boot_first: Callable[[], W] | None = None):
        self._boot = boot
        self._boot_first = boot_first or boot  # the sandbox's first worker: not a spare
        self._close = close
        self.count = count
        self._lock = threading.Lock()
        self._ready: deque[Booting[W]] = deque()  # spares, oldest (furthest along) first
        self._threads: list[Booting[W] | threading.Thread] = []  # everything close() waits for
        self._stopped = False

    def boot(self) -> Booting[W]:
        """Start one worker for the caller (not a spare): the sandbox's first, booting while pytest collects."""
        with self._lock:
            booting = Booting(self._boot_first, self.retire)
            self._threads.append(booting)
            return booting

    def fill(self) -> None:
        """Boot spares until ``count`` are ready or booting; nothing once stopped."""
        with self._lock:
            while not self._stopped and len(self._ready) < self.count:
                booting = Booting(self._boot, self.retire)
                self._ready.append(booting)
                self._threads.append(booting)

    def take(self) -> Booting[W] | None:
        """The oldest spare (it may still be booting: ``result()`` waits), or None when there is none."""
        with self._lock:
            return self._ready.popleft() if self._ready else None

    def retire(self, worker: W) -> None:
        """Close ``worker`` on a thread of its own (a container removal takes a while)."""
        closing = threading.Thread(target=self._close_quietly, args=(worker,), name="sandbox-retire", daemon=True)
        with self._lock:
            self._threads.append(closing)
        closing.start()

    def _close_quietly(self, worker: W) -> None:
        try:
            self._close(worker)
        except Exception:
            pass  # a container the engine refused to remove now is reaped later by its label

    def stop(self) -> None:
        """No spare will be wanted again (the file does not import): discard those booting, boot no more."""
        with self._lock:
            self._stopped = True
            spares = list(self._ready)
            self._ready.clear()
        for booting in spares:
            booting.discard()

    def close(self) -> None:
        """Stop, then wait until every worker booted or retired here is closed."""
        self.stop()
        while True:
            with self._lock:
                pending, self._threads = self._threads, []
            if not pending:
                return
            for thread in pending:  # a boot thread may retire its worker: that thread is joined next round
                thread.join()
