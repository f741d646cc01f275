"""Dynamic batching for model serving: implement DynamicBatcher below. See README.md for the full contract."""

from __future__ import annotations

import torch


class DynamicBatcher:
    """Groups requests into batches for one model call each, on a clock the caller passes in.

    DynamicBatcher(model, max_batch, max_wait):
      - ValueError (naming the argument) when max_batch < 1 or max_wait < 0.
    submit(x, now) -> int:
      - x is a [rows, features] tensor, 1 <= rows <= max_batch (else ValueError naming max_batch);
      - queues the request and returns its ticket: 0, 1, 2, ... Never calls the model.
    poll(now) -> list[tuple[int, torch.Tensor]]:
      - while requests wait and (they hold >= max_batch rows, or the oldest has waited
        now - arrival >= max_wait): take the oldest requests that fit in max_batch rows, in
        order, never splitting one; call the model ONCE on torch.cat of their x under
        torch.no_grad(); give each request its own rows of the output;
      - returns [(ticket, y), ...] in ticket order, [] when nothing is due.
    now never goes back: a now earlier than the last accepted one raises ValueError (naming now).
    A call that raises changes nothing. No clock, no sleep, no thread: time is the now you are given.
    """

    def __init__(self, model, max_batch: int, max_wait: float):
        raise NotImplementedError("DynamicBatcher.__init__")

    def submit(self, x: torch.Tensor, now: float) -> int:
        raise NotImplementedError("DynamicBatcher.submit")

    def poll(self, now: float) -> list[tuple[int, torch.Tensor]]:
        raise NotImplementedError("DynamicBatcher.poll")
