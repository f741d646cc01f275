"""The grad_monitor model and training step, used by both zones: the probes run them around the
candidate's monitor, the checks run them around the judge's own hooks.

The judge draws the weights and the steps and sends them in; a step is one forward and one
backward of sum(out * grad_out), plus sum(p * c) for each {name: c} of ``extra`` (how NaN,
inf and chosen gradient norms are injected: that term adds c to p's gradient).
"""

from __future__ import annotations

import torch
from torch import nn


class Net(nn.Module):
    """fc1 -> tanh -> fc2, scaled by ``gate``; ``aux`` joins only when forward(x, aux=True)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.fc2 = nn.Linear(6, 3)
        self.aux = nn.Linear(6, 3)
        self.gate = nn.Parameter(torch.ones(3))

    def forward(self, x, aux: bool = False):
        h = torch.tanh(self.fc1(x))
        out = self.fc2(h) * self.gate
        if aux:
            out = out + self.aux(h)
        return out


NAMES = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "aux.weight", "aux.bias", "gate"]


def build(weights: dict, frozen: list) -> Net:
    """A Net holding ``weights``, with the parameters named in ``frozen`` set to requires_grad=False."""
    torch.manual_seed(0)
    model = Net()
    model.load_state_dict(weights, strict=True)
    params = dict(model.named_parameters())
    for name in frozen:
        params[name].requires_grad_(False)
    return model


def run_step(model: Net, step: dict) -> None:
    """One training step: zero_grad if asked, forward, backward of the step's loss."""
    if step.get("zero_grad"):
        model.zero_grad(set_to_none=True)
    out = model(step["x"], aux=bool(step.get("aux")))
    loss = (out * step["grad_out"]).sum()
    params = dict(model.named_parameters())
    for name, c in step.get("extra", {}).items():
        loss = loss + (params[name] * c).sum()
    loss.backward()
