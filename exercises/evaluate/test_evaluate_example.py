"""Example tests for the evaluate exercise. Run: pytest exercises/evaluate/test_evaluate_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from evaluate import evaluate


def _batches():
    torch.manual_seed(0)
    return [(torch.randn(5, 4), torch.randint(0, 3, (5,))),
            (torch.randn(2, 4), torch.randint(0, 3, (2,)))]


def test_weighted_by_samples_and_back_in_train_mode():
    model = nn.Sequential(nn.Linear(4, 3), nn.Dropout(0.2))
    batches = _batches()
    model.train()
    metrics = evaluate(model, batches, nn.CrossEntropyLoss())
    assert model.training  # back in train mode

    model.eval()
    with torch.no_grad():
        logits = [model(x) for x, _ in batches]
    losses = [F.cross_entropy(out, y).item() for out, (_, y) in zip(logits, batches)]
    correct = sum((out.argmax(dim=1) == y).sum().item() for out, (_, y) in zip(logits, batches))

    assert set(metrics) == {"loss", "accuracy"}
    assert type(metrics["loss"]) is float and type(metrics["accuracy"]) is float
    assert metrics["loss"] == pytest.approx((5 * losses[0] + 2 * losses[1]) / 7, rel=1e-5)
    assert metrics["accuracy"] == pytest.approx(correct / 7)


def test_modes_restored_each_its_own():
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
    model.train()
    model[1].eval()  # a frozen BatchNorm inside a model in train mode
    evaluate(model, _batches(), nn.CrossEntropyLoss())
    assert model.training and model[0].training
    assert model[1].training is False


def test_a_generator_and_no_batches():
    model = nn.Linear(4, 3)
    metrics = evaluate(model, (b for b in _batches()), nn.CrossEntropyLoss())
    assert 0.0 <= metrics["accuracy"] <= 1.0
    with pytest.raises(ValueError):
        evaluate(model, [], nn.CrossEntropyLoss())
