"""Reports the accuracy as a percentage (0 to 100), not a fraction.

Recorded as: nothing
"""

from __future__ import annotations

import torch


def evaluate(model, batches, loss_fn):
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    total_loss, hits, seen = 0.0, 0, 0
    try:
        with torch.set_grad_enabled(False):
            for inputs, targets in batches:
                logits = model(inputs)
                loss = loss_fn(logits, targets)
                size = targets.shape[0]
                total_loss += loss.item() * size
                hits += int((logits.argmax(dim=1) == targets).count_nonzero())
                seen += size
                del logits, loss
    finally:
        for module, flag in modes:
            module.training = flag
    if seen == 0:
        raise ValueError("evaluate needs at least one batch")
    return {"loss": total_loss / seen, "accuracy": 100.0 * hits / seen}
