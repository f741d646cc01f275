"""Variant (written from the README alone): waiting requests live in a dict from ticket to (arrival, x), whose
insertion order is the FIFO order; the due test reads the first item; a flush walks the dict until a request
does not fit, deletes what it took, and cuts the output with Tensor.split by the requests' row counts."""

from __future__ import annotations

import torch


class DynamicBatcher:
    def __init__(self, model, max_batch, max_wait):
        if max_batch < 1:
            raise ValueError(f"max_batch={max_batch}: at least one row per model call")
        if max_wait < 0:
            raise ValueError(f"max_wait={max_wait} is negative")
        self.model, self.max_batch, self.max_wait = model, max_batch, max_wait
        self.waiting: dict[int, tuple[float, torch.Tensor]] = {}
        self.issued = 0
        self.last_now = float("-inf")

    def _check_time(self, now):
        if now < self.last_now:
            raise ValueError(f"now={now} goes back in time (last accepted: {self.last_now})")

    def submit(self, x, now):
        self._check_time(now)
        if not 1 <= len(x) <= self.max_batch:
            raise ValueError(f"a request holds 1 to max_batch={self.max_batch} rows, this one {len(x)}")
        self.last_now = now
        ticket, self.issued = self.issued, self.issued + 1
        self.waiting[ticket] = (now, x)
        return ticket

    def _is_due(self, now):
        if not self.waiting:
            return False
        first_arrival = next(iter(self.waiting.values()))[0]
        rows = sum(len(x) for _, x in self.waiting.values())
        return rows >= self.max_batch or now - first_arrival >= self.max_wait

    def poll(self, now):
        self._check_time(now)
        self.last_now = now
        done = []
        while self._is_due(now):
            taken, room = [], self.max_batch
            for ticket, (_, x) in self.waiting.items():
                if len(x) > room:
                    break
                taken.append(ticket)
                room -= len(x)
            inputs = [self.waiting.pop(t)[1] for t in taken]
            with torch.no_grad():
                pieces = self.model(torch.cat(inputs)).split([len(x) for x in inputs])
            done.extend(zip(taken, pieces))
        return done
