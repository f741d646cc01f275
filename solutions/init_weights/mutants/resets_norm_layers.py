"""Mutant: also 'initialises' BatchNorm/LayerNorm/GroupNorm to weight 1, bias 0, overwriting their values."""

from __future__ import annotations

import torch
from torch import nn

_CONVS = (nn.Conv1d, nn.Conv2d, nn.Conv3d)


def init_weights(module: nn.Module) -> None:
    if isinstance(module, nn.Linear):
        nn.init.xavier_uniform_(module.weight)
    elif isinstance(module, _CONVS):
        nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
    elif isinstance(module, (nn.modules.batchnorm._BatchNorm, nn.LayerNorm, nn.GroupNorm)):
        nn.init.ones_(module.weight)
        nn.init.zeros_(module.bias)
        return
    else:
        return
    if module.bias is not None:
        nn.init.zeros_(module.bias)


def initialize(model: nn.Module, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    model.apply(init_weights)
    return model
