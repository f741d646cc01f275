"""Variant (written from the README alone): an LRScheduler subclass whose cosine reads a progress fraction
clamped to [0, 1] with min(), so every t >= total_steps falls on cos(pi) = -1 and gives min_lr with no branch
of its own; the warmup is a separate branch on t < warmup_steps."""

from __future__ import annotations

import math

from torch.optim.lr_scheduler import LRScheduler


class WarmupCosine(LRScheduler):
    def __init__(self, optimizer, warmup_steps, total_steps, min_lr=0.0, last_epoch=-1):
        if warmup_steps < 0:
            raise ValueError(f"warmup_steps cannot be negative: warmup_steps={warmup_steps}")
        if total_steps <= warmup_steps:
            raise ValueError(f"total_steps must exceed warmup_steps: total_steps={total_steps}, "
                             f"warmup_steps={warmup_steps}")
        self.warmup_steps, self.total_steps, self.min_lr = warmup_steps, total_steps, min_lr
        super().__init__(optimizer, last_epoch)

    def _lr(self, base, t):
        if t < self.warmup_steps:
            return base * (t + 1) / self.warmup_steps
        progress = min(1.0, (t - self.warmup_steps) / (self.total_steps - self.warmup_steps))
        return self.min_lr + (base - self.min_lr) * 0.5 * (1.0 + math.cos(math.pi * progress))

    def get_lr(self):
        return [self._lr(base, self.last_epoch) for base in self.base_lrs]
