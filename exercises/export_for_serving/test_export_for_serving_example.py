"""Example tests for the export_for_serving exercise. Run: pytest exercises/export_for_serving/test_export_for_serving_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md). They load in the same
process; the checks load in a fresh one, where the model's class does not exist.
"""

# example harness: torch.cond (this file builds a model that branches, to export; your serving.py need not use it)
import torch
from torch import nn

from serving import export_model, load_for_serving


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.bn = nn.BatchNorm1d(16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


class Branchy(nn.Module):
    """Doubles the input when the batch's mean is positive, negates it otherwise (torch.cond)."""

    def forward(self, inputs):
        return torch.cond(inputs.mean() > 0, lambda t: t * 2.0, lambda t: -t, (inputs,))


def test_every_batch_size(tmp_path):
    torch.manual_seed(0)
    model = Net().eval()
    path = tmp_path / "model.pt2"
    export_model(model, torch.randn(4, 6), path)
    assert [p.name for p in tmp_path.iterdir()] == ["model.pt2"]
    serve = load_for_serving(path)
    for n in range(1, 34):
        x = torch.randn(n, 6)
        torch.testing.assert_close(serve(x), model(x), atol=1e-5, rtol=1e-4)


def test_the_branch_the_example_did_not_take(tmp_path):
    path = tmp_path / "branchy.pt2"
    export_model(Branchy().eval(), -torch.ones(3, 2), path)    # the example takes the "negate" branch
    serve = load_for_serving(path)
    x = torch.ones(5, 2)
    torch.testing.assert_close(serve(x), x * 2.0)               # the other branch
    program = torch.export.load(path)                           # what the serving stack reads
    torch.testing.assert_close(program.module()(-x), x)
