"""A batch counts as full only when the waiting rows exceed max_batch (> instead of >=).

Recorded as: nothing
"""

from __future__ import annotations

from collections import deque

import torch


class DynamicBatcher:
    def __init__(self, model, max_batch: int, max_wait: float):
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        if max_wait < 0:
            raise ValueError(f"max_wait must be >= 0, got {max_wait}")
        self.model = model
        self.max_batch = max_batch
        self.max_wait = max_wait
        self.queue: deque = deque()
        self.waiting_rows = 0
        self.next_ticket = 0
        self.clock = None

    def _advance(self, now):
        if self.clock is not None and now < self.clock:
            raise ValueError(f"now={now} is earlier than the last time seen ({self.clock})")

    def submit(self, x: torch.Tensor, now: float) -> int:
        self._advance(now)
        rows = x.shape[0]
        if rows < 1:
            raise ValueError("a request needs at least one row")
        if rows > self.max_batch:
            raise ValueError(f"a request of {rows} rows does not fit in max_batch={self.max_batch}")
        self.clock = now
        ticket = self.next_ticket
        self.next_ticket += 1
        self.queue.append((ticket, now, x))
        self.waiting_rows += rows
        return ticket

    def _due(self, now) -> bool:
        if not self.queue:
            return False
        return self.waiting_rows > self.max_batch or now - self.queue[0][1] >= self.max_wait

    def poll(self, now: float):
        self._advance(now)
        self.clock = now
        results = []
        while self._due(now):
            batch, rows = [], 0
            while self.queue and rows + self.queue[0][2].shape[0] <= self.max_batch:
                item = self.queue.popleft()
                batch.append(item)
                rows += item[2].shape[0]
            self.waiting_rows -= rows
            with torch.no_grad():
                out = self.model(torch.cat([x for _, _, x in batch]))
            offset = 0
            for ticket, _, x in batch:
                results.append((ticket, out[offset:offset + x.shape[0]]))
                offset += x.shape[0]
        return results
