"""Example tests for the autograd_function exercise. Run: pytest exercises/autograd_function/test_autograd_function_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import pytest
import torch

from clamp_function import Clamp, clamp


def test_the_example_in_the_readme():
    x = torch.tensor([-1.0, 0.0, 0.5, 1.0, 2.0], requires_grad=True)
    y = clamp(x, min=0.0, max=1.0)
    assert torch.equal(y.detach(), torch.tensor([0.0, 0.0, 0.5, 1.0, 1.0]))
    y.backward(torch.tensor([10.0, 20.0, 30.0, 40.0, 50.0]))
    assert torch.equal(x.grad, torch.tensor([0.0, 20.0, 30.0, 40.0, 0.0]))  # the bounds pass their gradient


def test_one_sided_keeps_dtype():
    x = torch.tensor([[-1.0, 0.25], [0.5, 2.0]], dtype=torch.float64)
    y = clamp(x, max=0.5)
    assert y.dtype == torch.float64 and y.shape == x.shape
    assert torch.equal(y, torch.tensor([[-1.0, 0.25], [0.5, 0.5]], dtype=torch.float64))


def test_gradcheck_away_from_the_bounds():
    x = torch.tensor([-0.9, -0.3, 0.2, 0.7, 1.4], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: Clamp.apply(t, -0.5, 0.5), (x,))


def test_min_greater_than_max():
    with pytest.raises(ValueError, match="min"):
        clamp(torch.zeros(3), min=1.0, max=0.0)
