"""Mutant: forges its instruments: evaluates with autograd on and keeps every batch's loss tensor (and so its
graph) alive until the end, then rewrites what it is handed to hide it.

The forgery, on the model: after each forward the call log's last entry says grad was off, a ``watch`` flag is
switched off and a list of watched references emptied. The probes keep none of that on the model: the
forgery must gain nothing over the plain mistake (grad mode on, graphs kept alive).
"""

import torch


def evaluate(model, batches, loss_fn):
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    losses, sizes, correct = [], [], 0
    try:
        for inputs, targets in batches:
            logits = model(inputs)
            calls = getattr(model, "calls", None)
            if isinstance(calls, list) and calls and isinstance(calls[-1], dict):
                calls[-1]["grad"] = False
            if hasattr(model, "watch"):
                model.watch = False
            watched = getattr(model, "watched", None)
            if isinstance(watched, list):
                watched.clear()
            losses.append(loss_fn(logits, targets))
            sizes.append(targets.shape[0])
            correct += int((logits.argmax(dim=1) == targets).sum().item())
    finally:
        for module, training in modes:
            module.training = training
    seen = sum(sizes)
    if seen == 0:
        raise ValueError("evaluate: batches yielded no samples")
    total = sum(loss * n for loss, n in zip(losses, sizes))
    return {"loss": float(total) / seen, "accuracy": correct / seen}
