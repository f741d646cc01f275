"""Variant (written from the README alone): a table from exact module class to the weight initialiser
(type(module) looked up, so ConvTranspose and subclass-free checks fall out), biases zeroed with
nn.init.zeros_, everything under torch.no_grad(); initialize seeds the global generator."""

from __future__ import annotations

import torch
from torch import nn


def _xavier(weight):
    nn.init.xavier_uniform_(weight, gain=1.0)


def _kaiming(weight):
    nn.init.kaiming_normal_(weight, mode="fan_out", nonlinearity="relu")


_INITIALISERS = {nn.Linear: _xavier, nn.Conv1d: _kaiming, nn.Conv2d: _kaiming, nn.Conv3d: _kaiming}


def init_weights(module):
    initialise = _INITIALISERS.get(type(module))
    if initialise is None:
        return
    with torch.no_grad():
        initialise(module.weight)
        if module.bias is not None:
            nn.init.zeros_(module.bias)


def initialize(model, seed):
    torch.manual_seed(seed)
    model.apply(init_weights)
    return model
