"""Mutant: initialises by parameter shape (Xavier for every >=2-D parameter, 0 for every 1-D one): norm layers, embeddings and custom modules are overwritten, convs get Xavier."""

from __future__ import annotations

import torch
from torch import nn


def init_weights(module: nn.Module) -> None:
    for p in module.parameters(recurse=False):
        if p.dim() >= 2:
            nn.init.xavier_uniform_(p)
        else:
            nn.init.zeros_(p)


def initialize(model: nn.Module, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    model.apply(init_weights)
    return model
