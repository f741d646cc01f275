"""Example tests for the clip_grad_norm exercise. Run: pytest exercises/clip_grad_norm/test_clip_grad_norm_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import pytest
import torch

from clip_grad import clip_grad_norm


def _param(grad):
    p = torch.zeros(grad.shape, requires_grad=True)
    p.grad = grad.clone()
    return p


def test_the_example_in_the_readme():
    a, b = _param(torch.tensor([3.0, 0.0])), _param(torch.tensor([4.0]))
    c = torch.zeros(3, requires_grad=True)  # no gradient: skipped
    total = clip_grad_norm([a, b, c], max_norm=1.0)
    assert total.shape == () and total.item() == pytest.approx(5.0)
    torch.testing.assert_close(a.grad, torch.tensor([0.6, 0.0]))
    torch.testing.assert_close(b.grad, torch.tensor([0.8]))
    assert c.grad is None


def test_below_max_norm_nothing_changes():
    grad = torch.tensor([0.5, -0.25, 0.125])
    p = _param(grad)
    clip_grad_norm(p, max_norm=10.0)
    assert torch.equal(p.grad, grad)


def test_inf_norm_and_a_generator():
    params = [_param(torch.tensor([1.0, -6.0])), _param(torch.tensor([2.0]))]
    total = clip_grad_norm((p for p in params), max_norm=3.0, norm_type=float("inf"))
    assert total.item() == pytest.approx(6.0)
    torch.testing.assert_close(params[0].grad, torch.tensor([0.5, -3.0]))  # every grad times 3 / 6


def test_errors():
    with pytest.raises(ValueError, match="max_norm"):
        clip_grad_norm([_param(torch.ones(2))], max_norm=-1.0)
    with pytest.raises(ValueError, match="norm_type"):
        clip_grad_norm([_param(torch.ones(2))], max_norm=1.0, norm_type=0.5)
