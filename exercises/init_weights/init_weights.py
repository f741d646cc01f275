"""Weight initialisation: implement the two functions below. See README.md for the full contract."""

from __future__ import annotations

from torch import nn


def init_weights(module: nn.Module) -> None:
    """Initialise this module's weights in place; meant for ``model.apply(init_weights)``.

    nn.Linear: weight Xavier-uniform (gain 1), U(-a, a) with a = sqrt(6 / (fan_in + fan_out)).
    nn.Conv1d/2d/3d: weight Kaiming-normal, mode "fan_out", nonlinearity "relu":
        N(0, std²) with std = sqrt(2 / fan_out), fan_out = out_channels * prod(kernel_size).
    Their biases (when not None) become 0. Every other module (normalisation layers,
    embeddings, transposed convolutions, custom modules' own parameters) is untouched.
    """
    raise NotImplementedError("init_weights")


def initialize(model: nn.Module, seed: int) -> nn.Module:
    """Seed the RNG with ``seed``, apply init_weights to every module however nested, return model itself."""
    raise NotImplementedError("initialize")
