"""Example tests for the init_weights exercise. Run: pytest exercises/init_weights/test_init_weights_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import math

import torch
from torch import nn

from init_weights import init_weights, initialize


def test_linear_is_xavier_uniform_with_zero_bias():
    torch.manual_seed(0)
    layer = nn.Linear(100, 50)
    layer.apply(init_weights)

    bound = math.sqrt(6 / (100 + 50))
    assert layer.weight.abs().max() <= bound
    assert layer.weight.abs().max() > 0.9 * bound  # spread over the whole range, not a narrower law
    assert torch.equal(layer.bias, torch.zeros(50))


def test_conv_is_kaiming_normal_fan_out():
    torch.manual_seed(0)
    conv = nn.Conv2d(16, 64, 3)
    conv.apply(init_weights)

    std = math.sqrt(2 / (64 * 3 * 3))  # fan_out = out_channels * kernel area
    assert abs(conv.weight.std().item() / std - 1) < 0.1
    assert torch.equal(conv.bias, torch.zeros(64))


def test_norm_layers_are_left_alone():
    model = nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4))
    with torch.no_grad():
        model[1].weight.fill_(2.5)
    model.apply(init_weights)
    assert torch.equal(model[1].weight, torch.full((4,), 2.5))


def test_initialize_is_reproducible_and_reaches_nested_layers():
    def build():
        return nn.Sequential(nn.Sequential(nn.Conv1d(2, 4, 3), nn.ReLU()), nn.Flatten(), nn.Linear(8, 3))

    a, b = build(), build()
    assert initialize(a, seed=1) is a
    initialize(b, seed=1)
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        assert torch.equal(p, q), name
    assert torch.equal(a[0][0].bias, torch.zeros(4))  # nested two levels deep
