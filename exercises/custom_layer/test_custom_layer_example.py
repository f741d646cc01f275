"""Example tests for the custom_layer exercise. Run: pytest exercises/custom_layer/test_custom_layer_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import math

import torch

from custom_layer import CustomLinear, Swish


def test_linear_by_hand():
    layer = CustomLinear(2, 3)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
        layer.bias.copy_(torch.tensor([0.5, -0.5, 0.0]))

    y = layer(torch.tensor([2.0, 3.0]))  # a 1-D input gives a 1-D output

    torch.testing.assert_close(y, torch.tensor([2.5, 2.5, 5.0]))


def test_linear_shapes_parameters_and_repr():
    layer = CustomLinear(4, 6)
    assert layer(torch.randn(2, 5, 4)).shape == (2, 5, 6)
    assert {name: tuple(p.shape) for name, p in layer.named_parameters()} == {"weight": (6, 4), "bias": (6,)}
    assert layer.extra_repr() == "in_features=4, out_features=6, bias=True"

    no_bias = CustomLinear(4, 6, bias=False)
    assert no_bias.bias is None and list(no_bias.state_dict()) == ["weight"]


def test_linear_initial_values_are_within_the_bound():
    layer = CustomLinear(100, 50)
    bound = 1 / math.sqrt(100)
    assert layer.weight.abs().max() <= bound and layer.bias.abs().max() <= bound
    assert layer.weight.std() > bound / 3  # spread out, not all near zero


def test_swish():
    x = torch.linspace(-3, 3, 7)
    torch.testing.assert_close(Swish()(x), x * torch.sigmoid(x))
    assert list(Swish(2.0).state_dict()) == []

    act = Swish(0.5, learnable=True)
    y = act(x)
    torch.testing.assert_close(y, x * torch.sigmoid(0.5 * x))
    y.sum().backward()
    assert act.beta.grad is not None and act.beta.shape == ()
    assert list(act.state_dict()) == ["beta"]
