"""Example tests for the grad_monitor exercise. Run: pytest exercises/grad_monitor/test_grad_monitor_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import math

import torch
from torch import nn

from grad_monitor import GradMonitor


def _model():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
    model[2].bias.requires_grad_(False)
    return model


def test_the_example_in_the_readme():
    model = _model()
    xs = [torch.randn(5, 4), torch.randn(5, 4)]
    with GradMonitor(model, vanish_below=1e-6, explode_above=10.0) as mon:
        for x in xs:
            model.zero_grad()
            model(x).sum().backward()
            want = float(torch.linalg.vector_norm(model[0].weight.grad))
    rep = mon.report()
    assert sorted(rep) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    assert len(rep["0.weight"]["norms"]) == 2
    assert math.isclose(rep["0.weight"]["norms"][1], want, rel_tol=1e-5)
    assert rep["2.bias"] == {"norms": [], "flags": ["frozen"]}
    assert not model[0].weight._backward_hooks


def test_nan_is_flagged_and_an_unused_parameter_too():
    model = _model()
    extra = nn.Parameter(torch.ones(3))
    model.register_parameter("extra", extra)          # never used in forward
    with GradMonitor(model) as mon:
        loss = model(torch.randn(2, 4)).sum() + (model[0].bias * torch.tensor([math.nan, 0.0, 0.0])).sum()
        loss.backward()
    rep = mon.report()
    assert rep["extra"] == {"norms": [], "flags": ["unused"]}
    assert "nan" in rep["0.bias"]["flags"] and math.isnan(rep["0.bias"]["norms"][0])
