"""Warmup + cosine learning-rate scheduler: implement the class below. See README.md for the full contract."""

from __future__ import annotations

from torch.optim import Optimizer
from torch.optim.lr_scheduler import LRScheduler


class WarmupCosine(LRScheduler):
    """Linear warmup, then cosine decay from each group's base lr to min_lr.

    With t the number of step() calls made so far (t = 0 right after construction),
    W = warmup_steps, T = total_steps and base the group's lr when the scheduler was
    built, every param group's lr is:

        t < W:       base * (t + 1) / W
        W <= t < T:  min_lr + (base - min_lr) * (1 + cos(pi * (t - W) / (T - W))) / 2
        t >= T:      min_lr

    The lr of step t is set on optimizer.param_groups[i]["lr"] by the constructor
    (t = 0) and by each step(); get_last_lr() returns the same values.
    state_dict() / load_state_dict() resume the schedule exactly.

    Raise ValueError naming `warmup_steps` if warmup_steps < 0, and naming
    `total_steps` if total_steps <= warmup_steps.
    """

    def __init__(self, optimizer: Optimizer, warmup_steps: int, total_steps: int, min_lr: float = 0.0,
                 last_epoch: int = -1):
        raise NotImplementedError("WarmupCosine.__init__")

    def get_lr(self) -> list[float]:
        """The lr of every param group at step self.last_epoch (LRScheduler calls this in step())."""
        raise NotImplementedError("WarmupCosine.get_lr")
