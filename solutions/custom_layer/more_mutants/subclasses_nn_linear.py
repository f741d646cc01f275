"""Mutant: CustomLinear subclasses the forbidden nn.Linear and lets it do the work
(construction, initialisation and forward through F.linear).

Should be caught by: test_linear_output_shape, test_linear_forward, test_linear_float64,
test_linear_gradients, test_linear_parameters, test_linear_without_bias,
test_state_dict_loads_into_nn_linear, test_state_dict_from_nn_linear, test_extra_repr,
test_initialisation_distribution (the tripwire names torch.nn.Linear and
torch.nn.functional.linear; the source scan names the line).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class CustomLinear(nn.Linear):
    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        if in_features < 1:
            raise ValueError(f"in_features must be at least 1, got in_features={in_features}")
        if out_features < 1:
            raise ValueError(f"out_features must be at least 1, got out_features={out_features}")
        super().__init__(in_features, out_features, bias=bias)


class Swish(nn.Module):
    """x * sigmoid(beta * x); beta is a learnable scalar parameter when learnable=True."""

    def __init__(self, beta: float = 1.0, learnable: bool = False):
        super().__init__()
        if learnable:
            self.beta = nn.Parameter(torch.tensor(float(beta)))
        else:
            self.beta = float(beta)

    def forward(self, x: Tensor) -> Tensor:
        return x * torch.sigmoid(self.beta * x)
