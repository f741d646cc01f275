"""Judge-side helpers for the custom_layer checks: strategies and references.

Everything here runs in the trusted judge, where nn.Linear and F.linear may be
used freely: forbidden APIs are removed only from the sandbox. References are
PyTorch's own (F.linear, nn.Linear, torch.sigmoid).

The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from hypothesis import strategies as st
from torch import Tensor

from grader.judge import Tolerances, seeds, shapes

#: The presets: values O(1), at most 8 input features, so float32 rounding error is
#: ~1e-6 whatever the order of the sums; float64 must really be computed in float64.
TOL = Tolerances()


# ---------------------------------------------------------------------- strategies


@dataclass(frozen=True)
class LinearCase:
    lead: tuple[int, ...]
    in_features: int
    out_features: int
    bias: bool
    seed: int

    @property
    def out_shape(self) -> tuple[int, ...]:
        return (*self.lead, self.out_features)

    def tensors(self, dtype=torch.float32):
        """weight, bias (None without one), x and the generator, for more draws."""
        g = torch.Generator().manual_seed(self.seed)
        weight = torch.randn(self.out_features, self.in_features, generator=g, dtype=dtype)
        bias = torch.randn(self.out_features, generator=g, dtype=dtype) if self.bias else None
        x = torch.randn(*self.lead, self.in_features, generator=g, dtype=dtype)
        return weight, bias, x, g


@st.composite
def linear_cases(draw, *, bias=None, max_lead: int = 3) -> LinearCase:
    """0..max_lead leading dims (0: a 1-D input), in and out features 1..8, with or without bias."""
    return LinearCase(
        lead=draw(shapes(dims=(0, max_lead), sides=(1, 3))),
        in_features=draw(st.integers(1, 8)),
        out_features=draw(st.integers(1, 8)),
        bias=draw(st.booleans()) if bias is None else bias,
        seed=draw(seeds()),
    )


#: Values of beta exactly representable in float32 (so float32 and float64 agree on it).
betas = st.integers(-24, 24).map(lambda k: k / 8)


@dataclass(frozen=True)
class SwishCase:
    shape: tuple[int, ...]
    beta: float
    seed: int

    def x(self, dtype=torch.float32) -> Tensor:
        g = torch.Generator().manual_seed(self.seed)
        return 3 * torch.randn(self.shape, generator=g, dtype=dtype)

    def grad_out(self, dtype=torch.float32) -> Tensor:
        g = torch.Generator().manual_seed(self.seed + 1)
        return torch.randn(self.shape, generator=g, dtype=dtype)


@st.composite
def swish_cases(draw) -> SwishCase:
    return SwishCase(shape=draw(shapes(dims=(0, 3), sides=(1, 4))), beta=draw(betas), seed=draw(seeds()))


# ---------------------------------------------------------------------- references


def linear_reference(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    return F.linear(x, weight, bias)


def swish_reference(x: Tensor, beta) -> Tensor:
    return x * torch.sigmoid(beta * x)
