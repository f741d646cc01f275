"""Example tests for the running_stats exercise. Run: pytest exercises/running_stats/test_running_stats_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import math

import torch

from running_stats import RunningNorm


def test_parameters_and_buffers():
    norm = RunningNorm(3)
    assert sorted(n for n, _ in norm.named_parameters()) == ["bias", "weight"]
    assert sorted(n for n, _ in norm.named_buffers()) == ["num_batches_tracked", "running_mean", "running_var"]
    assert sorted(norm.state_dict()) == ["bias", "num_batches_tracked", "running_mean", "running_var", "weight"]


def test_the_example_in_the_readme():
    norm = RunningNorm(2, momentum=0.5)
    x = torch.tensor([[1.0, 10.0], [3.0, 30.0]])
    y = norm(x)
    torch.testing.assert_close(y, torch.tensor([[-1.0, -1.0], [1.0, 1.0]]), atol=1e-4, rtol=0)
    torch.testing.assert_close(norm.running_mean, torch.tensor([1.0, 10.0]))
    torch.testing.assert_close(norm.running_var, torch.tensor([1.5, 100.5]))  # unbiased batch var
    assert norm.num_batches_tracked.item() == 1

    norm.eval()
    out = norm(torch.tensor([[1.0, 10.0]]))
    torch.testing.assert_close(out, torch.tensor([[0.0, 0.0]]))
    torch.testing.assert_close(norm.running_mean, torch.tensor([1.0, 10.0]))  # eval: no update
    assert norm.num_batches_tracked.item() == 1


def test_buffers_follow_to():
    norm = RunningNorm(2).to(torch.float64)
    assert norm.running_mean.dtype == torch.float64
    assert norm.running_var.dtype == torch.float64
    assert norm.num_batches_tracked.dtype == torch.int64


def test_no_graph_in_the_buffers():
    norm = RunningNorm(2)
    x = torch.randn(4, 2, requires_grad=True)
    norm(x).sum().backward()
    assert not norm.running_mean.requires_grad and norm.running_mean.grad_fn is None
    assert math.isfinite(x.grad.abs().sum().item())
