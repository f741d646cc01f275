"""Mutant: checks its arguments only after super().__init__ has already changed the optimizer's param groups.

The contract says to raise before touching the optimizer. Should be caught by test_rejects_bad_arguments only.
"""

from __future__ import annotations

import math

from torch.optim import Optimizer
from torch.optim.lr_scheduler import LRScheduler


class WarmupCosine(LRScheduler):
    """lr_t = base * (t + 1) / warmup for t < warmup, then cosine from base to min_lr at total."""

    def __init__(self, optimizer: Optimizer, warmup_steps: int, total_steps: int, min_lr: float = 0.0,
                 last_epoch: int = -1):
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps
        self.min_lr = min_lr
        super().__init__(optimizer, last_epoch)   # sets base_lrs and applies step 0
        if warmup_steps < 0:  # too late: the optimizer's groups already hold initial_lr and the t = 0 lr
            raise ValueError(f"warmup_steps must be >= 0, got warmup_steps={warmup_steps}")
        if total_steps <= warmup_steps:
            raise ValueError(f"total_steps must exceed warmup_steps, got total_steps={total_steps} "
                             f"and warmup_steps={warmup_steps}")

    def _lr_at(self, base_lr: float, t: int) -> float:
        if t < self.warmup_steps:
            return base_lr * (t + 1) / self.warmup_steps
        if t >= self.total_steps:
            return self.min_lr
        progress = (t - self.warmup_steps) / (self.total_steps - self.warmup_steps)
        return self.min_lr + (base_lr - self.min_lr) * 0.5 * (1.0 + math.cos(math.pi * progress))

    def get_lr(self) -> list[float]:
        # Closed form in the step counter: never reads the groups' current lr, so a
        # resumed scheduler (last_epoch restored by load_state_dict) continues exactly.
        return [self._lr_at(base, self.last_epoch) for base in self.base_lrs]
