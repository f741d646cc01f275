"""The models the checks export, for both zones: the probes build them, the checks compute with them.

Three small models in eval mode, each taking one float32 tensor whose dim 0 is the batch:

- ``Mlp``: (batch, 6) -> (batch, 3); Linear, BatchNorm1d (running statistics set), ReLU, Linear.
- ``Gated``: (batch, 6) -> (batch, 4); a data-dependent branch written with ``torch.cond``:
  the "up" branch when the batch's mean input is positive, the "down" branch otherwise.
- ``Tokens``: (batch, 5, 4) -> (batch, 2); its forward's argument is named ``tokens``, and it
  flattens with ``reshape(tokens.shape[0], -1)``.

``build(kind, seed)`` makes one with the same weights in either zone. ``eager(model, x)`` is the
model's output computed without ``torch.cond`` (a Python ``if`` on the same predicate), so the
judge never compiles anything.
"""

from __future__ import annotations

import torch
from torch import nn

IN_FEATURES = {"mlp": (6,), "gated": (6,), "tokens": (5, 4)}
OUT_FEATURES = {"mlp": 3, "gated": 4, "tokens": 2}


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.bn = nn.BatchNorm1d(16)
        self.fc2 = nn.Linear(16, 3)
        with torch.no_grad():
            self.bn.running_mean.normal_()
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


def _up(h):
    return torch.relu(h) * 2.0 + 1.0


def _down(h):
    return torch.sigmoid(h) - 1.0


class Gated(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        h = self.fc(x)
        return torch.cond(x.mean() > 0, _up, _down, (h,))


class Tokens(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(4, 8)
        self.head = nn.Linear(5 * 8, 2)

    def forward(self, tokens):
        h = torch.tanh(self.embed(tokens))
        return self.head(h.reshape(tokens.shape[0], -1))


CLASSES = {"mlp": Mlp, "gated": Gated, "tokens": Tokens}


def build(kind: str, seed: int, cls=None) -> nn.Module:
    """The model ``kind`` with weights drawn under ``seed``, in eval mode; ``cls`` a subclass to build instead."""
    torch.manual_seed(seed)
    return (cls or CLASSES[kind])().eval()


def eager(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The model's output for ``x``, with ``Gated``'s torch.cond written as a Python ``if``."""
    with torch.no_grad():
        if isinstance(model, Gated):
            h = model.fc(x)
            return _up(h) if bool(x.mean() > 0) else _down(h)
        return model(x)


def inputs(kind: str, batches, seed: int, shift: float = 0.0) -> list:
    """One input per batch size, float32, drawn under ``seed``, ``shift`` added (it picks Gated's branch)."""
    g = torch.Generator().manual_seed(seed)
    return [torch.randn((n, *IN_FEATURES[kind]), generator=g) + shift for n in batches]
