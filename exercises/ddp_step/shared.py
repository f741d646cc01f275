"""The ddp_step scenario's training setup, used by both zones.

Every rank (probes.py) builds this model, optimizer and loss from a scenario; the
judge (checks/_ddp_step_helpers.py) builds the same to compute one ordinary
single-process step on every rank's shard concatenated, the truth a data-parallel
step must match.
"""

from __future__ import annotations

import torch
from torch import nn


class Net(nn.Module):
    """The model every DDP scenario trains.

    ``scale`` is a 0-d parameter; ``spare`` is in no forward pass, so its
    gradient stays None.
    """

    def __init__(self, d_in: int, hidden: int, d_out: int):
        super().__init__()
        self.body = nn.Linear(d_in, hidden)
        self.head = nn.Linear(hidden, d_out)
        self.scale = nn.Parameter(torch.ones(()))
        self.spare = nn.Parameter(torch.zeros(2))

    def forward(self, x):
        return self.head(torch.tanh(self.body(x))) * self.scale


def build(scenario: dict) -> nn.Module:
    """Net(*dims) holding the scenario's parameters, those named under "frozen" not requiring grad."""
    model = Net(*scenario["dims"])
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(scenario["params"][name])
    for name, p in model.named_parameters():
        if name in scenario.get("frozen", []):
            p.requires_grad_(False)
    return model


def make_optimizer(spec: dict, params) -> torch.optim.Optimizer:
    """{"name": "sgd", "lr", "momentum"?} or {"name": "adam", "lr"}."""
    if spec["name"] == "sgd":
        return torch.optim.SGD(params, lr=spec["lr"], momentum=spec.get("momentum", 0.0))
    if spec["name"] == "adam":
        return torch.optim.Adam(params, lr=spec["lr"])
    raise ValueError(f"unknown optimizer {spec['name']!r}")


LOSSES = {"mse": nn.MSELoss, "cross_entropy": nn.CrossEntropyLoss}
