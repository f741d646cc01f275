"""The activation_hooks models, used by both zones: the checks compute with them, the probes build them.

The judge draws the weights, sends them in as a state_dict, and compares what the
candidate captured with what its own hooks see on its own copy of the same model.
"""

from __future__ import annotations

import torch
from torch import nn


class Net(nn.Module):
    """encoder (a Sequential), head, and a layer that forward never calls."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 5))
        self.head = nn.Linear(5, 3)
        self.unused = nn.Linear(5, 5)

    def forward(self, x):
        return self.head(torch.relu(self.encoder(x)))


class Pair(nn.Module):
    """Returns a nested tuple: (2h, (h + 1, h.sum(-1)))."""

    def forward(self, h):
        return h * 2, (h + 1, h.sum(-1))


class TupleNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.pair = Pair()

    def forward(self, x):
        a, (b, s) = self.pair(self.proj(x))
        return a + b + s.unsqueeze(-1)


ARCHS = {
    "net": Net,
    "inplace": lambda: nn.Sequential(nn.Linear(4, 5), nn.ReLU(inplace=True), nn.Linear(5, 3)),
    "tuple": TupleNet,
}
