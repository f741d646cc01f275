"""Custom layers: implement the two modules below. See README.md for the full contract.

Do not use torch.nn.Linear, torch.nn.functional.linear, torch.nn.functional.bilinear,
torch.nn.functional.silu or torch.nn.SiLU.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class CustomLinear(nn.Module):
    """A fully connected layer: y = x @ weightᵀ + bias, a drop-in for nn.Linear.

    Attributes:
        weight: nn.Parameter of shape (out_features, in_features).
        bias: nn.Parameter of shape (out_features,), or None with bias=False (then no
            bias appears in parameters() or state_dict()).

    Both start uniform on [-1/√in_features, 1/√in_features], like nn.Linear, and
    state_dict() has nn.Linear's keys and shapes.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        """Raise ValueError (naming the argument) if in_features < 1 or out_features < 1."""
        super().__init__()
        raise NotImplementedError("CustomLinear.__init__")

    def forward(self, x: Tensor) -> Tensor:
        """x (*, in_features) -> (*, out_features): any number of leading dims, none included.

        Same dtype as x and the layer (float32, or float64 after .double());
        differentiable in x, weight and bias.
        """
        raise NotImplementedError("CustomLinear.forward")

    def extra_repr(self) -> str:
        """'in_features=I, out_features=O, bias=B', exactly as nn.Linear writes it."""
        raise NotImplementedError("CustomLinear.extra_repr")


class Swish(nn.Module):
    """Swish(x) = x * sigmoid(beta * x), elementwise.

    With learnable=True, beta is an nn.Parameter of shape () starting at ``beta``,
    listed in state_dict() as "beta" and trained by backpropagation. Otherwise the
    module has no parameters and an empty state_dict().
    """

    def __init__(self, beta: float = 1.0, learnable: bool = False):
        super().__init__()
        raise NotImplementedError("Swish.__init__")

    def forward(self, x: Tensor) -> Tensor:
        """Same shape and dtype as x."""
        raise NotImplementedError("Swish.forward")
