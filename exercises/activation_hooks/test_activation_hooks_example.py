"""Example tests for the activation_hooks exercise. Run: pytest exercises/activation_hooks/test_activation_hooks_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import pytest
import torch
from torch import nn

from hooks import ActivationCapture


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 5), nn.ReLU(inplace=True), nn.Linear(5, 3))


def test_captures_a_detached_copy():
    model = _model()
    x = torch.randn(2, 4)
    expected = model[0](x).detach()  # the Linear's output before the in-place ReLU
    with ActivationCapture(model, ["0", "2"]) as cap:
        y = model(x)
    got = cap.activations["0"]
    torch.testing.assert_close(got, expected)
    assert not got.requires_grad and got.grad_fn is None
    assert y.requires_grad  # the model's output is untouched
    assert sorted(cap.activations) == ["0", "2"]


def test_hooks_are_removed():
    model = _model()
    with ActivationCapture(model, ["0"]) as cap:
        model(torch.randn(1, 4))
    first = cap.activations["0"].clone()
    assert all(len(m._forward_hooks) == 0 for m in model.modules())
    model(torch.randn(1, 4))
    torch.testing.assert_close(cap.activations["0"], first)


def test_hooks_are_removed_when_the_block_raises():
    model = _model()
    with pytest.raises(KeyError):
        with ActivationCapture(model, ["2"]):
            raise KeyError("boom")
    assert all(len(m._forward_hooks) == 0 for m in model.modules())


def test_unknown_name():
    with pytest.raises(ValueError, match="decoder"):
        ActivationCapture(_model(), ["decoder"])
