"""A dynamic batcher for model serving, driven by an injected clock (reference solution)."""

from __future__ import annotations

from collections import deque

import torch


class DynamicBatcher:
    """Queues requests and runs the model on batches of them.

    A batch is the longest run of the oldest requests whose rows fit in max_batch; it
    is flushed by poll(now) when the queue holds max_batch rows or more, or when the
    oldest request has waited max_wait (inclusive). submit never calls the model.
    """

    def __init__(self, model, max_batch: int, max_wait: float):
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        if max_wait < 0:
            raise ValueError(f"max_wait must be >= 0, got {max_wait}")
        self.model = model
        self.max_batch = max_batch
        self.max_wait = max_wait
        self._queue: deque = deque()  # (ticket, x, arrival), oldest first
        self._rows = 0  # rows waiting in the queue
        self._next_ticket = 0
        self._clock = None  # the latest now seen by a call that succeeded

    def _tick(self, now: float) -> None:
        if self._clock is not None and now < self._clock:
            raise ValueError(f"now went backwards: {now} < {self._clock}")

    def submit(self, x: torch.Tensor, now: float) -> int:
        rows = x.shape[0]
        if rows < 1 or rows > self.max_batch:
            raise ValueError(f"a request must have 1 to max_batch={self.max_batch} rows, got {rows}")
        self._tick(now)
        self._clock = now
        ticket = self._next_ticket
        self._next_ticket += 1
        self._queue.append((ticket, x, now))
        self._rows += rows
        return ticket

    def _due(self, now: float) -> bool:
        if not self._queue:
            return False
        oldest = self._queue[0][2]
        return self._rows >= self.max_batch or now - oldest >= self.max_wait

    def poll(self, now: float) -> list[tuple[int, torch.Tensor]]:
        self._tick(now)
        self._clock = now
        results = []
        while self._due(now):
            batch, rows = [], 0
            while self._queue and rows + self._queue[0][1].shape[0] <= self.max_batch:
                request = self._queue.popleft()
                batch.append(request)
                rows += request[1].shape[0]
            self._rows -= rows
            with torch.no_grad():
                out = self.model(torch.cat([x for _, x, _ in batch]))
            offset = 0
            for ticket, x, _ in batch:
                results.append((ticket, out[offset:offset + x.shape[0]]))
                offset += x.shape[0]
        return results
