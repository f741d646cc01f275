"""Example tests for the grad_accumulation exercise. Run: pytest exercises/grad_accumulation/test_grad_accumulation_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import pytest
import torch
from torch import nn

from grad_accum import train_with_accumulation


class CountingSGD(torch.optim.SGD):
    def __init__(self, params, lr):
        super().__init__(params, lr=lr)
        self.calls = []

    def zero_grad(self, *args, **kwargs):
        self.calls.append("zero_grad")
        super().zero_grad(*args, **kwargs)

    def step(self, *args, **kwargs):
        self.calls.append("step")
        return super().step(*args, **kwargs)


def _setup(seed=0):
    torch.manual_seed(seed)
    model = nn.Linear(3, 1).double()
    batches = [(torch.randn(n, 3, dtype=torch.float64), torch.randn(n, 1, dtype=torch.float64)) for n in (2, 2, 4)]
    return model, batches


def test_one_group_is_one_full_batch_step():
    model, batches = _setup()
    reference = nn.Linear(3, 1).double()
    reference.load_state_dict(model.state_dict())

    optimizer = CountingSGD(model.parameters(), lr=0.1)
    losses = train_with_accumulation(model, optimizer, nn.MSELoss(), batches, accumulation_steps=3)

    full_x = torch.cat([x for x, _ in batches])
    full_y = torch.cat([y for _, y in batches])
    full_loss = nn.MSELoss()(reference(full_x), full_y)   # sizes 2, 2, 4: weights 1/4, 1/4, 1/2
    full_loss.backward()
    with torch.no_grad():
        for p in reference.parameters():
            p -= 0.1 * p.grad

    assert optimizer.calls == ["zero_grad", "step"]
    assert losses == pytest.approx([full_loss.item()])
    for got, want in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(got, want)


def test_trailing_partial_group_steps_too():
    model, batches = _setup(1)
    optimizer = CountingSGD(model.parameters(), lr=0.1)
    losses = train_with_accumulation(model, optimizer, nn.MSELoss(), batches, accumulation_steps=2)
    assert optimizer.calls == ["zero_grad", "step", "zero_grad", "step"]   # groups [0, 1] and [2]
    assert len(losses) == 2 and all(type(v) is float for v in losses)


def test_bad_accumulation_steps():
    model, batches = _setup()
    with pytest.raises(ValueError, match="accumulation_steps"):
        train_with_accumulation(model, torch.optim.SGD(model.parameters(), lr=0.1), nn.MSELoss(), batches, 0)
