"""Mutant: handles nn.Conv2d only: Conv1d and Conv3d keep PyTorch's default init."""

from __future__ import annotations

import torch
from torch import nn

_CONVS = (nn.Conv2d,)


def init_weights(module: nn.Module) -> None:
    if isinstance(module, nn.Linear):
        nn.init.xavier_uniform_(module.weight)
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
