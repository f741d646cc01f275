"""Example tests for the rmsnorm_rope exercise. Run: pytest exercises/rmsnorm_rope/test_rmsnorm_rope_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import math

import pytest
import torch

from rmsnorm_rope import RMSNorm, RotaryEmbedding


def test_rmsnorm_example_from_the_readme():
    norm = RMSNorm(2)
    assert isinstance(norm.weight, torch.nn.Parameter)
    torch.testing.assert_close(norm.weight.detach(), torch.ones(2))
    x = torch.tensor([[3.0, 4.0]])
    torch.testing.assert_close(norm(x), x / math.sqrt(12.5 + 1e-6))


def test_rmsnorm_has_no_mean_subtracted():
    x = torch.tensor([[1.0, 2.0, 3.0]])
    out = RMSNorm(3, eps=0.0)(x)
    torch.testing.assert_close(out, x / math.sqrt(14 / 3))


def test_rope_example_from_the_readme():
    rope = RotaryEmbedding(4)
    x = torch.tensor([1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 1, 4)
    v = torch.randn(1, 1, 1, 3)
    q_rot, k_rot, v_out = rope(x, x, v, torch.tensor([1]))
    c1, s1, c2, s2 = math.cos(1), math.sin(1), math.cos(0.01), math.sin(0.01)
    want = torch.tensor([1 * c1 - 3 * s1, 2 * c2 - 4 * s2, 3 * c1 + 1 * s1, 4 * c2 + 2 * s2]).reshape(1, 1, 1, 4)
    torch.testing.assert_close(q_rot, want)
    torch.testing.assert_close(k_rot, want)
    torch.testing.assert_close(v_out, v)
    torch.testing.assert_close(x, torch.tensor([1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 1, 4))   # unchanged


def test_rope_position_zero_turns_nothing():
    q, k, v = torch.randn(2, 3, 1, 8), torch.randn(2, 1, 1, 8), torch.randn(2, 1, 1, 5)
    q_rot, k_rot, _ = RotaryEmbedding(8)(q, k, v)
    torch.testing.assert_close(q_rot, q)
    torch.testing.assert_close(k_rot, k)


def test_rope_rejects_an_odd_head_dim():
    with pytest.raises(ValueError, match="5"):
        RotaryEmbedding(5)
