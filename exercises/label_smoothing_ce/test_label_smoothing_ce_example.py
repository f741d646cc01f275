"""Example tests for the label_smoothing_ce exercise. Run: pytest exercises/label_smoothing_ce/test_label_smoothing_ce_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import math

import pytest
import torch

from label_smoothing import label_smoothing_cross_entropy


def test_the_example_in_the_readme():
    logits = torch.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    target = torch.tensor([0, -100])
    log_p = [2.0 - math.log(math.exp(2.0) + 2.0), -math.log(math.exp(2.0) + 2.0)]
    row0 = -(0.8 * log_p[0] + 0.1 * log_p[1] + 0.1 * log_p[1])

    none = label_smoothing_cross_entropy(logits, target, epsilon=0.3, reduction="none")
    torch.testing.assert_close(none, torch.tensor([row0, 0.0]))
    mean = label_smoothing_cross_entropy(logits, target, epsilon=0.3)
    torch.testing.assert_close(mean, torch.tensor(row0))  # the ignored row is not counted


def test_epsilon_one_is_uniform():
    logits = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    loss = label_smoothing_cross_entropy(logits, torch.tensor([2]), epsilon=1.0)
    torch.testing.assert_close(loss, -torch.log_softmax(logits, dim=1).mean())


def test_class_axis_is_dim_1():
    logits = torch.zeros(2, 4, 3)       # (N, C, d1): uniform over 4 classes everywhere
    target = torch.zeros(2, 3, dtype=torch.long)
    loss = label_smoothing_cross_entropy(logits, target, reduction="none")
    assert loss.shape == (2, 3)
    torch.testing.assert_close(loss, torch.full((2, 3), math.log(4.0)))


def test_huge_logits_and_errors():
    logits = torch.tensor([[1e4, 0.0, -1e4]], requires_grad=True)
    loss = label_smoothing_cross_entropy(logits, torch.tensor([2]), epsilon=0.1)
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(logits.grad).all()
    with pytest.raises(ValueError, match="epsilon"):
        label_smoothing_cross_entropy(logits, torch.tensor([0]), epsilon=1.5)
