"""The model the batcher serves, built the same way in the sandbox (probes) and the judge (checks).

A torch.nn.Linear(3, 2) with small integer weights: on the checks' inputs (integers in
[-4, 4]) every output is an exact float32 integer plus one half, so a request's rows
come out the same whether the model sees them alone or inside any batch.
"""

from __future__ import annotations

import torch
from torch import nn

FEATURES = 3
OUTPUTS = 2


def build_model() -> nn.Linear:
    model = nn.Linear(FEATURES, OUTPUTS)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[1.0, 2.0, -1.0], [0.0, -3.0, 2.0]]))
        model.bias.copy_(torch.tensor([0.5, -1.5]))
    return model.eval()
