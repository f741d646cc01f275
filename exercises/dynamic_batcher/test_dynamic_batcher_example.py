"""Example tests for the dynamic_batcher exercise. Run: pytest exercises/dynamic_batcher/test_dynamic_batcher_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import pytest
import torch
from torch import nn

from dynamic_batcher import DynamicBatcher


class Recorder(nn.Module):
    """A Linear(3, 2) that remembers how many rows each call got."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = nn.Linear(3, 2)
        self.rows = []

    def forward(self, x):
        self.rows.append(x.shape[0])
        return self.linear(x)


def test_the_example_in_the_readme():
    model = Recorder()
    batcher = DynamicBatcher(model, max_batch=4, max_wait=1.0)
    xa, xb, xc = torch.randn(3, 3), torch.randn(2, 3), torch.randn(1, 3)

    assert batcher.submit(xa, now=0.0) == 0
    assert batcher.submit(xb, now=0.25) == 1
    assert model.rows == []                       # submit never calls the model

    first = batcher.poll(now=0.25)                # 5 rows wait: a's batch is due; b does not fit
    assert [t for t, _ in first] == [0] and model.rows == [3]
    torch.testing.assert_close(first[0][1], model.linear(xa).detach())

    assert batcher.poll(now=1.0) == []            # b has waited 0.75 < 1.0
    assert batcher.submit(xc, now=1.0) == 2

    second = batcher.poll(now=1.25)               # b has waited exactly 1.0: due (inclusive)
    assert [t for t, _ in second] == [1, 2] and model.rows == [3, 3]
    torch.testing.assert_close(second[0][1], model.linear(xb).detach())
    torch.testing.assert_close(second[1][1], model.linear(xc).detach())


def test_errors():
    with pytest.raises(ValueError, match="max_batch"):
        DynamicBatcher(Recorder(), max_batch=0, max_wait=1.0)
    batcher = DynamicBatcher(Recorder(), max_batch=2, max_wait=1.0)
    with pytest.raises(ValueError, match="max_batch"):
        batcher.submit(torch.randn(3, 3), now=0.0)   # more rows than max_batch
    batcher.poll(now=1.0)
    with pytest.raises(ValueError, match="now"):
        batcher.poll(now=0.5)                       # time never goes back
