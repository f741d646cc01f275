"""Probes for the init_weights exercise. They run INSIDE the sandbox.

They build one model (``_zoo``) holding every kind of layer the contract talks
about, optionally preset some of its state_dict entries to values the judge
chose, initialise it with the candidate's code and send back its state_dict.
Probes never judge anything: the hidden checks test the returned weights.
"""

from __future__ import annotations

import torch
from torch import nn

import init_weights
from grader.sandbox import probekit


class Gate(nn.Module):
    """A custom module whose own parameters happen to be called weight and bias."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3, 4))
        self.bias = nn.Parameter(torch.randn(4))

    def forward(self, x):
        return x @ self.weight + self.bias


class Block(nn.Module):
    """Layers two containers deep, next to a Gate."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Sequential(nn.Linear(6, 5), nn.ReLU()), nn.Conv2d(2, 4, 3))
        self.gate = Gate()


def _zoo() -> nn.Module:
    return nn.ModuleDict({
        "linear": nn.Linear(256, 64),
        "linear_wide": nn.Linear(32, 512),
        "conv1d": nn.Conv1d(32, 128, 5),
        "conv2d": nn.Conv2d(16, 64, 3),
        "conv3d": nn.Conv3d(8, 32, 3),
        "bn1": nn.BatchNorm1d(4),
        "bn2": nn.BatchNorm2d(3),
        "ln": nn.LayerNorm(6),
        "gn": nn.GroupNorm(2, 4),
        "emb": nn.Embedding(10, 4),
        "deconv": nn.ConvTranspose1d(3, 5, 2),
        "act": nn.ReLU(),
        "gate": Gate(),
        "block": Block(),
    })


def _bias_free() -> nn.Module:
    return nn.Sequential(nn.Linear(40, 30, bias=False), nn.Conv1d(3, 6, 2, bias=False),
                         nn.Conv2d(2, 4, 3, bias=False), nn.Conv3d(2, 3, 2, bias=False))


def _preset(model: nn.Module, values: dict | None) -> None:
    state = model.state_dict()
    with torch.no_grad():
        for name, value in (values or {}).items():
            state[name].copy_(value)


def _state(model: nn.Module) -> dict:
    return {name: t.detach().clone() for name, t in model.state_dict().items()}


def _identity(model: nn.Module) -> dict:
    return {name: id(p) for name, p in model.named_parameters()}


def init_zoo(seed, *, preset=None, via="apply", build_seed=0, bias_free=False):
    """Build the zoo (or the bias-free model) under build_seed, preset entries, initialise, return its state.

    via="apply": torch.manual_seed(seed), then model.apply(init_weights).
    via="initialize": returned = initialize(model, seed).
    Returns {"state": state_dict after, "returned_model": returned is model (None for
    "apply"), "same_parameters": the parameters are the same objects, with the same
    requires_grad, as before}.
    """
    model = probekit.seeded(_bias_free if bias_free else _zoo, seed=build_seed)
    _preset(model, preset)
    before = _identity(model)
    returned_model = None
    if via == "apply":
        torch.manual_seed(seed)
        model.apply(init_weights.init_weights)
    else:
        torch.manual_seed(build_seed + 12345)  # some other random state before the call
        returned_model = init_weights.initialize(model, seed) is model
    same = _identity(model) == before and all(p.requires_grad for p in model.parameters())
    return {"state": _state(model), "returned_model": returned_model, "same_parameters": same}
