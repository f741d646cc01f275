"""Variant: a LambdaLR subclass whose per-group lambda returns lr_t / base (a factor), so
LambdaLR's own step(), get_last_lr() and state_dict() do the rest.

Correct: must earn full marks.
"""

from __future__ import annotations

import math

from torch.optim.lr_scheduler import LambdaLR


class WarmupCosine(LambdaLR):
    def __init__(self, optimizer, warmup_steps: int, total_steps: int, min_lr: float = 0.0,
                 last_epoch: int = -1):
        if warmup_steps < 0:
            raise ValueError(f"warmup_steps must not be negative (warmup_steps={warmup_steps})")
        if not total_steps > warmup_steps:
            raise ValueError(f"need total_steps > warmup_steps (total_steps={total_steps})")
        self.warmup_steps, self.total_steps, self.min_lr = warmup_steps, total_steps, min_lr
        bases = [group.get("initial_lr", group["lr"]) for group in optimizer.param_groups]
        super().__init__(optimizer, [self._factor(base) for base in bases], last_epoch)

    def _factor(self, base: float):
        warmup, total, floor = self.warmup_steps, self.total_steps, self.min_lr

        def factor(t: int) -> float:
            if t < warmup:
                return (t + 1) / warmup
            if t >= total:
                return floor / base
            cosine = 0.5 * (1.0 + math.cos(math.pi * (t - warmup) / (total - warmup)))
            return (floor + (base - floor) * cosine) / base

        return factor
