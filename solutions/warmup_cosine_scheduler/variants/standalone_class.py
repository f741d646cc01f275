"""Variant: a plain class (no LRScheduler) that keeps its own step counter, writes the lrs
into the param groups itself, and saves only plain numbers in state_dict; the cosine is
written as min_lr + (base - min_lr) * cos^2(pi/2 * progress).

Correct: must earn full marks.
"""

from __future__ import annotations

import math


class WarmupCosine:
    def __init__(self, optimizer, warmup_steps, total_steps, min_lr=0.0, last_epoch=-1):
        if warmup_steps < 0:
            raise ValueError(f"negative warmup_steps: {warmup_steps}")
        if total_steps <= warmup_steps:
            raise ValueError(f"total_steps ({total_steps}) must be larger than warmup_steps ({warmup_steps})")
        self.optimizer = optimizer
        self.warmup_steps, self.total_steps, self.min_lr = warmup_steps, total_steps, float(min_lr)
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [float(group["initial_lr"]) for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def _lr(self, base: float) -> float:
        t, w, total = self.last_epoch, self.warmup_steps, self.total_steps
        if t < w:
            return base * (t + 1) / w
        progress = min(1.0, (t - w) / (total - w))
        return self.min_lr + (base - self.min_lr) * math.cos(math.pi / 2 * progress) ** 2

    def step(self) -> None:
        self.last_epoch += 1
        self._last_lr = [self._lr(base) for base in self.base_lrs]
        for group, lr in zip(self.optimizer.param_groups, self._last_lr):
            group["lr"] = lr

    def get_last_lr(self) -> list[float]:
        return list(self._last_lr)

    def state_dict(self) -> dict:
        return {"last_epoch": self.last_epoch, "base_lrs": list(self.base_lrs), "min_lr": self.min_lr,
                "warmup_steps": self.warmup_steps, "total_steps": self.total_steps,
                "last_lr": list(self._last_lr)}

    def load_state_dict(self, state: dict) -> None:
        self.last_epoch = state["last_epoch"]
        self.base_lrs = list(state["base_lrs"])
        self.min_lr, self.warmup_steps, self.total_steps = state["min_lr"], state["warmup_steps"], state["total_steps"]
        self._last_lr = list(state["last_lr"])
