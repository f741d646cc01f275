"""Evaluates with autograd on and keeps every batch's loss tensor (and so its graph) alive until the end."""

import torch


def evaluate(model, batches, loss_fn):
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    losses, sizes, correct = [], [], 0
    try:
        for inputs, targets in batches:
            logits = model(inputs)
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
