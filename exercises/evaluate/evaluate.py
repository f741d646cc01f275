"""Evaluate a classifier: implement evaluate below. See README.md for the full contract."""

from __future__ import annotations

from typing import Callable, Iterable

import torch
from torch import Tensor, nn


def evaluate(
    model: nn.Module,
    batches: Iterable[tuple[Tensor, Tensor]],
    loss_fn: Callable[[Tensor, Tensor], Tensor],
) -> dict[str, float]:
    """Return {"loss": mean loss over all samples, "accuracy": fraction right}, as Python floats.

    - batches yields (inputs, targets); model(inputs) is (B, C) logits, targets (B,) int64.
    - loss_fn returns the batch MEAN: weight each batch by its size B.
    - accuracy: logits.argmax(dim=1) == targets, counted over all samples.
    - every forward in eval mode and without gradients (torch.no_grad or inference_mode).
    - afterwards every module's .training is what it was before, also when something raises.
    - keep no outputs, losses or graphs alive; read batches once, one batch at a time.
    - no batches at all: ValueError.
    """
    raise NotImplementedError("evaluate")
