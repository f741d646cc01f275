"""Example tests for the int8_linear exercise. Run: pytest exercises/int8_linear/test_int8_linear_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import torch
from torch import nn

from int8_linear import QuantLinear


def test_the_example_in_the_readme():
    torch.manual_seed(0)
    linear = nn.Linear(4, 3)
    q = QuantLinear.from_float(linear)
    assert q.weight_int8.dtype == torch.int8 and q.scale.dtype == torch.float32
    assert q.scale.shape == (3,)
    assert q.weight_int8.abs().amax(dim=1).tolist() == [127, 127, 127]
    torch.testing.assert_close(q.scale, linear.weight.detach().abs().amax(dim=1) / 127)
    x = torch.randn(2, 4)
    want = x @ (q.weight_int8.float() * q.scale[:, None]).T + linear.bias.detach()
    torch.testing.assert_close(q(x), want)
    assert sorted(q.state_dict()) == ["bias", "scale", "weight_int8"]
    assert list(q.parameters()) == []


def test_an_all_zero_row():
    linear = nn.Linear(3, 2, bias=False)
    with torch.no_grad():
        linear.weight.copy_(torch.tensor([[0.0, 0.0, 0.0], [1.5, -2.0, 0.5]]))
    q = QuantLinear.from_float(linear)
    assert q.weight_int8[0].tolist() == [0, 0, 0]
    assert q.weight_int8[1].tolist() == [95, -127, 32]      # 1.5 / (2 / 127) = 95.25, 0.5 / (2 / 127) = 31.75
    out = q(torch.randn(5, 3))
    assert torch.isfinite(out).all() and (out[:, 0] == 0).all()
