"""Early stopping: implement the class below. See README.md for the full contract."""

from __future__ import annotations

from torch import nn


class EarlyStopping:
    """Tells a training loop when the validation metric has stopped improving.

    Attributes (read by the training loop and by the checks):
        best: the best metric seen so far: inf for mode "min" and -inf for mode "max"
            before any step.
        best_step: 0-based index of the step() call that set `best`; -1 before any.
        counter: step() calls since the last improvement.
        should_stop: the value the last step() returned (False before any).
    """

    def __init__(self, patience: int = 5, min_delta: float = 0.0, mode: str = "min"):
        """Raise ValueError (naming the argument) if patience < 1, min_delta < 0 or
        mode is not "min" or "max"."""
        raise NotImplementedError("EarlyStopping.__init__")

    def step(self, metric: float, model: nn.Module | None = None) -> bool:
        """Record one evaluation; return counter >= patience.

        An improvement is metric < best - min_delta ("min") or metric > best + min_delta
        ("max"); a tie is not one; NaN never improves; the first finite metric always
        does. On an improvement, best and best_step update, counter becomes 0 and, when
        a model is given, a copy of model.state_dict() is kept in memory (later training
        must not change it). Otherwise counter grows by 1, also after a stop.
        """
        raise NotImplementedError("EarlyStopping.step")

    def restore_best_weights(self, model: nn.Module) -> None:
        """Load the kept snapshot into model; RuntimeError if no snapshot was taken."""
        raise NotImplementedError("EarlyStopping.restore_best_weights")
