"""Variant: draws by hand (uniform_ / normal_ with the fans computed from the shape), and
initialize seeds inside torch.random.fork_rng so the caller's random state is left alone."""

from __future__ import annotations

import math

import torch
from torch import nn


def init_weights(module: nn.Module) -> None:
    if type(module) is nn.Linear:
        fan_out, fan_in = module.weight.shape
        bound = math.sqrt(6.0 / (fan_in + fan_out))
        draw = lambda w: w.uniform_(-bound, bound)  # noqa: E731
    elif type(module) in (nn.Conv1d, nn.Conv2d, nn.Conv3d):
        shape = module.weight.shape
        std = math.sqrt(2.0 / (shape[0] * math.prod(shape[2:])))
        draw = lambda w: w.normal_(0.0, std)  # noqa: E731
    else:
        return
    with torch.no_grad():
        draw(module.weight)
        if module.bias is not None:
            module.bias.zero_()


def initialize(model: nn.Module, seed: int) -> nn.Module:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model.apply(init_weights)
    return model
