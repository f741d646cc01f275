"""Variant: functools.singledispatch on the module's class, and initialize walking model.modules()
(pre-order, unlike apply's post-order) after seeding."""

from __future__ import annotations

from functools import singledispatch

import torch
from torch import nn


@singledispatch
def init_weights(module: nn.Module) -> None:
    """Anything not registered below is left alone."""


@init_weights.register
def _(module: nn.Linear) -> None:
    nn.init.xavier_uniform_(module.weight, gain=1.0)
    if module.bias is not None:
        nn.init.constant_(module.bias, 0.0)


@init_weights.register(nn.Conv1d)
@init_weights.register(nn.Conv2d)
@init_weights.register(nn.Conv3d)
def _(module) -> None:
    nn.init.kaiming_normal_(module.weight, a=0, mode="fan_out", nonlinearity="relu")
    if module.bias is not None:
        with torch.no_grad():
            module.bias.fill_(0)


def initialize(model: nn.Module, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    for module in model.modules():
        init_weights(module)
    return model
