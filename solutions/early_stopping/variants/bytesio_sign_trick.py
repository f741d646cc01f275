"""Variant: serialises the snapshot with torch.save into an in-memory io.BytesIO and
loads it back with torch.load(weights_only=True); turns mode "max" into "min" by
negating (metric + min_delta < best on signed values); validates mode first.

Correct: must earn full marks (an in-memory buffer is not a file).
"""

from __future__ import annotations

import io

import torch
from torch import nn


class EarlyStopping:
    def __init__(self, patience: int = 5, min_delta: float = 0.0, mode: str = "min"):
        if mode == "min":
            self._sign = 1.0
        elif mode == "max":
            self._sign = -1.0
        else:
            raise ValueError("mode must be one of 'min', 'max'")
        if isinstance(patience, bool) or patience < 1:
            raise ValueError(f"patience={patience} is invalid: need patience >= 1")
        if min_delta < 0.0:
            raise ValueError(f"min_delta={min_delta} is invalid: need min_delta >= 0")
        self.patience, self.min_delta, self.mode = patience, min_delta, mode
        self.best = self._sign * float("inf")
        self.best_step = -1
        self.counter = 0
        self.should_stop = False
        self._calls = 0
        self._buffer: bytes | None = None

    def step(self, metric: float, model: nn.Module | None = None) -> bool:
        signed, best = self._sign * metric, self._sign * self.best
        if signed + self.min_delta < best:  # False for NaN
            self.best, self.best_step, self.counter = metric, self._calls, 0
            if model is not None:
                buffer = io.BytesIO()
                torch.save(model.state_dict(), buffer)
                self._buffer = buffer.getvalue()
        else:
            self.counter = self.counter + 1
        self._calls += 1
        self.should_stop = bool(self.counter >= self.patience)
        return self.should_stop

    def restore_best_weights(self, model: nn.Module) -> None:
        if self._buffer is None:
            raise RuntimeError("no snapshot: no improving step() was given a model")
        state = torch.load(io.BytesIO(self._buffer), weights_only=True)
        model.load_state_dict(state)
