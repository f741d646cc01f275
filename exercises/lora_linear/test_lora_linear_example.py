"""Example tests for the lora_linear exercise. Run: pytest exercises/lora_linear/test_lora_linear_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import pytest
import torch
from torch import nn

from lora import LoRALinear


def test_starts_equal_to_the_frozen_base():
    torch.manual_seed(0)
    base = nn.Linear(4, 3)
    layer = LoRALinear(base, r=2, alpha=4.0)

    assert layer.base is base
    assert not base.weight.requires_grad and not base.bias.requires_grad
    assert [n for n, p in layer.named_parameters() if p.requires_grad] == ["lora_A", "lora_B"]
    assert layer.lora_A.shape == (2, 4) and layer.lora_B.shape == (3, 2)
    x = torch.randn(5, 4)
    torch.testing.assert_close(layer(x), base(x))


def test_forward_by_hand():
    base = nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        base.weight.copy_(torch.tensor([[1.0, 1.0]]))
    layer = LoRALinear(base, r=1, alpha=2.0)  # scaling = 2.0
    with torch.no_grad():
        layer.lora_A.copy_(torch.tensor([[1.0, 0.0]]))
        layer.lora_B.copy_(torch.tensor([[0.5]]))

    y = layer(torch.tensor([3.0, 4.0]))  # 7 from the base, 2.0 * (3 * 0.5) = 3 from the adapter

    torch.testing.assert_close(y, torch.tensor([10.0]))


def test_merge_is_an_equivalent_plain_linear():
    torch.manual_seed(0)
    base = nn.Linear(3, 2)
    layer = LoRALinear(base, r=2, alpha=1.0)
    with torch.no_grad():
        layer.lora_B.normal_()
    x = torch.randn(4, 3)

    merged = layer.merge()

    assert type(merged) is nn.Linear and merged is not base
    torch.testing.assert_close(merged(x), layer(x))


def test_rank_must_be_positive():
    with pytest.raises(ValueError, match="r"):
        LoRALinear(nn.Linear(2, 2), r=0, alpha=1.0)
