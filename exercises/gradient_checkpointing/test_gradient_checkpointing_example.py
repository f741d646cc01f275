"""Example tests for the gradient_checkpointing exercise. Run: pytest exercises/gradient_checkpointing/test_gradient_checkpointing_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import pytest
import torch
from torch import nn

from checkpointing import checkpointed_forward


def _blocks(n=6, p=0.5):
    torch.manual_seed(0)
    return [nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Dropout(p)) for _ in range(n)]


def _plain(blocks, x):
    for block in blocks:
        x = block(x)
    return x


def test_same_output_and_gradients_as_the_plain_loop():
    blocks = _blocks()
    x = torch.randn(4, 8, requires_grad=True)
    torch.manual_seed(1)
    _plain(blocks, x).sum().backward()
    want = [p.grad.clone() for b in blocks for p in b.parameters()] + [x.grad.clone()]
    for b in blocks:
        b.zero_grad(set_to_none=True)
    x.grad = None

    torch.manual_seed(1)
    out = checkpointed_forward(blocks, x, segments=2)
    out.sum().backward()  # dropout: the recomputation must see the forward's masks
    got = [p.grad for b in blocks for p in b.parameters()] + [x.grad]
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)


def test_parameters_get_gradients_when_x_does_not_require_grad():
    blocks = _blocks(p=0.0)
    x = torch.randn(4, 8)
    checkpointed_forward(blocks, x, segments=3).sum().backward()
    assert all(p.grad is not None for b in blocks for p in b.parameters())
    assert x.grad is None and not x.requires_grad


def test_each_block_is_called_twice():
    blocks = _blocks(n=4, p=0.0)
    calls = []
    for i, b in enumerate(blocks):
        b.register_forward_hook(lambda m, a, o, i=i: calls.append((i, torch.is_grad_enabled())))
    out = checkpointed_forward(blocks, torch.randn(2, 8, requires_grad=True), segments=2)
    assert calls == [(0, False), (1, False), (2, False), (3, False)]
    out.sum().backward()
    assert calls[4:] == [(2, True), (3, True), (0, True), (1, True)]  # last segment first


def test_bad_segments():
    with pytest.raises(ValueError, match="segments"):
        checkpointed_forward(_blocks(n=3), torch.randn(2, 8), segments=4)
