"""Reference: evaluate a classifier over batches, sample-weighted, modes restored module by module."""

from __future__ import annotations

from typing import Callable, Iterable

import torch
from torch import Tensor, nn


def evaluate(
    model: nn.Module,
    batches: Iterable[tuple[Tensor, Tensor]],
    loss_fn: Callable[[Tensor, Tensor], Tensor],
) -> dict[str, float]:
    # Each module's own mode: model.train(was_training) would flatten a frozen submodule.
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    total_loss = 0.0
    correct = 0
    seen = 0
    try:
        with torch.no_grad():
            for inputs, targets in batches:
                logits = model(inputs)
                loss = loss_fn(logits, targets)
                n = targets.shape[0]
                total_loss += loss.item() * n  # a Python float: no tensor, no graph kept
                correct += int((logits.argmax(dim=1) == targets).sum().item())
                seen += n
    finally:
        for module, training in modes:
            module.training = training
    if seen == 0:
        raise ValueError("evaluate: batches yielded no samples; the mean over zero samples is undefined")
    return {"loss": total_loss / seen, "accuracy": correct / seen}
