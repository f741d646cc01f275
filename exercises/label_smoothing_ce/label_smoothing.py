"""Label-smoothed cross-entropy: implement the function below. See README.md for the full contract."""

from __future__ import annotations

from torch import Tensor


def label_smoothing_cross_entropy(logits: Tensor, target: Tensor, epsilon: float = 0.0,
                                  ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """Cross-entropy of `logits` against label-smoothed targets.

    logits: (N, C) or (N, C, d1, ...), float32 or float64; the class axis is dim 1.
    target: (N,) or (N, d1, ...), int64 class indices in [0, C), or ignore_index.

    The smoothed target of a position puts 1 - epsilon + epsilon / C on its class and
    epsilon / C on every other class (epsilon spread over ALL C classes). The loss of a
    position is -sum_c q_c * log_softmax(logits)_c; positions whose target equals
    ignore_index have loss 0 and are left out of the mean's denominator (all ignored:
    "mean" gives nan, "sum" 0). reduction: "mean" | "sum" | "none" ("none" returns the
    per-position losses, shaped like target). Numerically stable for huge logits and
    differentiable with respect to logits. The result has the dtype of logits.

    Raise ValueError naming `epsilon` when epsilon is outside [0, 1], and naming
    `reduction` when reduction is not one of the three.
    """
    raise NotImplementedError("label_smoothing_cross_entropy")
