"""Variant written from the README alone, as a candidate would: plain lists for the queue,
the due test as "now >= arrival + max_wait", the batch formed with itertools.accumulate,
the model run under torch.inference_mode(), and the output cut with torch.split.
"""

from __future__ import annotations

import itertools

import torch


class DynamicBatcher:
    def __init__(self, model, max_batch: int, max_wait: float):
        if not max_batch >= 1:
            raise ValueError("max_batch must be a positive number of rows")
        if not max_wait >= 0:
            raise ValueError("max_wait must not be negative")
        self.model, self.max_batch, self.max_wait = model, max_batch, max_wait
        self.tickets: list[int] = []
        self.inputs: list[torch.Tensor] = []
        self.arrivals: list[float] = []
        self.issued = 0
        self.last_now = float("-inf")

    def _check_time(self, now):
        if now < self.last_now:
            raise ValueError(f"now={now} is earlier than the last now={self.last_now}")

    def submit(self, x, now):
        if not 1 <= len(x) <= self.max_batch:
            raise ValueError(f"request has {len(x)} rows; allowed 1..max_batch ({self.max_batch})")
        self._check_time(now)
        self.last_now = now
        self.tickets.append(self.issued)
        self.inputs.append(x)
        self.arrivals.append(now)
        self.issued += 1
        return self.tickets[-1]

    def poll(self, now):
        self._check_time(now)
        self.last_now = now
        done = []
        while self.tickets and (sum(len(x) for x in self.inputs) >= self.max_batch
                                or now >= self.arrivals[0] + self.max_wait):
            sizes = [len(x) for x in self.inputs]
            n = sum(1 for total in itertools.accumulate(sizes) if total <= self.max_batch)
            # accumulate is increasing, so the fitting prefix is exactly the first n requests
            with torch.inference_mode():
                out = self.model(torch.cat(self.inputs[:n], dim=0))
            done.extend(zip(self.tickets[:n], torch.split(out, sizes[:n])))
            del self.tickets[:n], self.inputs[:n], self.arrivals[:n]
        return done
