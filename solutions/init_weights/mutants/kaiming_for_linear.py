"""Mutant: Kaiming normal (fan_in, relu) for Linear weights instead of Xavier uniform."""

from __future__ import annotations

import torch
from torch import nn

_CONVS = (nn.Conv1d, nn.Conv2d, nn.Conv3d)


def init_weights(module: nn.Module) -> None:
    if isinstance(module, nn.Linear):
        nn.init.kaiming_normal_(module.weight, nonlinearity="relu")
    elif isinstance(module, _CONVS):
        nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
    else:
        return  # normalisation layers and everything else keep their values
    if module.bias is not None:
        nn.init.zeros_(module.bias)


def initialize(model: nn.Module, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    model.apply(init_weights)
    return model
