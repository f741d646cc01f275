"""Variant (written from the README alone): the comparison picked once from a table of two lambdas (lower or
higher is better, min_delta folded in), the snapshot a dict comprehension of detached clones of state_dict(),
restored with load_state_dict; NaN rejected by the comparison itself (every test with NaN is False)."""

from __future__ import annotations

import math

_BETTER = {
    "min": lambda metric, best, delta: metric < best - delta,
    "max": lambda metric, best, delta: metric > best + delta,
}


class EarlyStopping:
    def __init__(self, patience: int = 5, min_delta: float = 0.0, mode: str = "min"):
        if patience < 1:
            raise ValueError(f"patience must be at least 1, got {patience}")
        if min_delta < 0:
            raise ValueError(f"min_delta must be non-negative, got {min_delta}")
        if mode not in _BETTER:
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        self.patience, self.min_delta, self.mode = patience, min_delta, mode
        self._better = _BETTER[mode]
        self.best = math.inf if mode == "min" else -math.inf
        self.best_step = -1
        self.counter = 0
        self.should_stop = False
        self._calls = 0
        self._snapshot = None

    def step(self, metric: float, model=None) -> bool:
        index = self._calls
        self._calls += 1
        if self._better(metric, self.best, self.min_delta):
            self.best = float(metric)
            self.best_step = index
            self.counter = 0
            if model is not None:
                self._snapshot = {k: v.detach().clone() for k, v in model.state_dict().items()}
        else:
            self.counter += 1
        self.should_stop = self.counter >= self.patience
        return self.should_stop

    def restore_best_weights(self, model) -> None:
        if self._snapshot is None:
            raise RuntimeError("restore_best_weights: no snapshot was taken (no improving step had a model)")
        model.load_state_dict({k: v.clone() for k, v in self._snapshot.items()})
