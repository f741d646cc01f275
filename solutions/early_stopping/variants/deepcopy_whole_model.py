"""Variant: keeps a deep copy of the whole model as the snapshot and loads its
state_dict back; writes the improvement test as best - metric > min_delta with an
explicit NaN test; properties derived from a step log.

Correct: must earn full marks.
"""

from __future__ import annotations

import copy
import math

from torch import nn


class EarlyStopping:
    def __init__(self, patience: int = 5, min_delta: float = 0.0, mode: str = "min"):
        if mode not in {"min", "max"}:
            raise ValueError(f"unknown mode {mode!r}: mode must be 'min' or 'max'")
        if not patience >= 1:
            raise ValueError("patience must be a positive integer")
        if not min_delta >= 0:
            raise ValueError("min_delta must not be negative")
        self.patience = patience
        self.min_delta = min_delta
        self.mode = mode
        self.best = float("inf") if mode == "min" else float("-inf")
        self.best_step = -1
        self.counter = 0
        self.should_stop = False
        self.num_steps = 0
        self.best_model: nn.Module | None = None

    def _gain(self, metric: float) -> float:
        """How much better than best the metric is (positive = better)."""
        return self.best - metric if self.mode == "min" else metric - self.best

    def step(self, metric: float, model: nn.Module | None = None) -> bool:
        index = self.num_steps
        self.num_steps += 1
        if not math.isnan(metric) and self._gain(metric) > self.min_delta:
            self.best = metric
            self.best_step = index
            self.counter = 0
            if model is not None:
                self.best_model = copy.deepcopy(model)
        else:
            self.counter += 1
        self.should_stop = self.counter >= self.patience
        return self.should_stop

    def restore_best_weights(self, model: nn.Module) -> None:
        if self.best_model is None:
            raise RuntimeError("restore_best_weights: no best weights were recorded")
        model.load_state_dict(self.best_model.state_dict())
