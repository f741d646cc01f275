"""Mutant: snapshots named_parameters() only and restores with strict=False: buffers (BatchNorm
running statistics) are not restored.

Should be caught by: test_restores_best_weights, test_snapshot_is_an_independent_copy,
test_restores_into_the_model_given.
"""

from __future__ import annotations

import math

import torch
from torch import nn


class EarlyStopping:
    """Stop when the metric has not improved by more than min_delta for `patience` steps."""

    def __init__(self, patience: int = 5, min_delta: float = 0.0, mode: str = "min"):
        if patience < 1:
            raise ValueError(f"patience must be at least 1, got patience={patience}")
        if min_delta < 0:
            raise ValueError(f"min_delta must be >= 0, got min_delta={min_delta}")
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got mode={mode!r}")
        self.patience = patience
        self.min_delta = min_delta
        self.mode = mode
        self.best = math.inf if mode == "min" else -math.inf
        self.best_step = -1
        self.counter = 0
        self.should_stop = False
        self._steps = 0
        self._snapshot: dict[str, torch.Tensor] | None = None

    def _improves(self, metric: float) -> bool:
        # NaN compares False with everything, so it never improves.
        if self.mode == "min":
            return metric < self.best - self.min_delta
        return metric > self.best + self.min_delta

    def step(self, metric: float, model: nn.Module | None = None) -> bool:
        metric = float(metric)
        if self._improves(metric):
            self.best = metric
            self.best_step = self._steps
            self.counter = 0
            if model is not None:
                self._snapshot = {k: v.detach().clone() for k, v in model.named_parameters()}
        else:
            self.counter += 1
        self._steps += 1
        self.should_stop = self.counter >= self.patience
        return self.should_stop

    def restore_best_weights(self, model: nn.Module) -> None:
        if self._snapshot is None:
            raise RuntimeError("no snapshot to restore: step() never improved with a model given")
        model.load_state_dict(self._snapshot, strict=False)
