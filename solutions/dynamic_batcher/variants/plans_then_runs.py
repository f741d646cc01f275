"""Variant: each request stores its deadline (arrival + max_wait) in a dataclass, poll first
plans every due batch from a snapshot of the queue (a pure function of the queue and now),
then runs them; results are gathered in a dict by ticket and returned sorted. The model
runs under torch.no_grad() used as a decorator; rows are cut with narrow().
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class _Request:
    ticket: int
    x: torch.Tensor
    deadline: float

    @property
    def rows(self) -> int:
        return int(self.x.size(0))


def _plan(queue: list, max_batch: int, now: float) -> list[list]:
    """The batches poll(now) flushes, in order, for the queue as it stands."""
    batches, i = [], 0
    while i < len(queue):
        waiting = sum(r.rows for r in queue[i:])
        if waiting < max_batch and queue[i].deadline > now:
            break
        j, rows = i, 0
        while j < len(queue) and rows + queue[j].rows <= max_batch:
            rows += queue[j].rows
            j += 1
        batches.append(queue[i:j])
        i = j
    return batches


class DynamicBatcher:
    def __init__(self, model, max_batch: int, max_wait: float):
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        if max_wait < 0:
            raise ValueError("max_wait must be >= 0")
        self._model = model
        self._max_batch = max_batch
        self._max_wait = max_wait
        self._queue: deque[_Request] = deque()
        self._count = 0
        self._now: float | None = None

    def _advance(self, now: float) -> None:
        if self._now is not None and now < self._now:
            raise ValueError(f"the clock went backwards: now={now}, last now={self._now}")

    def submit(self, x: torch.Tensor, now: float) -> int:
        if x.size(0) == 0 or x.size(0) > self._max_batch:
            raise ValueError(f"a request needs 1..{self._max_batch} rows (max_batch), got {x.size(0)}")
        self._advance(now)
        self._now = now
        request = _Request(self._count, x, now + self._max_wait)
        self._count += 1
        self._queue.append(request)
        return request.ticket

    @torch.no_grad()
    def _run(self, batch: list) -> dict:
        out = self._model(torch.cat([r.x for r in batch]))
        answers, start = {}, 0
        for r in batch:
            answers[r.ticket] = out.narrow(0, start, r.rows)
            start += r.rows
        return answers

    def poll(self, now: float) -> list:
        self._advance(now)
        self._now = now
        answers = {}
        for batch in _plan(list(self._queue), self._max_batch, now):
            answers.update(self._run(batch))
            for _ in batch:
                self._queue.popleft()
        return sorted(answers.items())
