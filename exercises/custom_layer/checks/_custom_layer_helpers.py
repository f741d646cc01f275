"""Judge-side helpers for the custom_layer checks: strategies, references, statistics.

Everything here runs in the trusted judge, where nn.Linear and F.linear may be
used freely: the worker's tripwire only watches the sandbox. References are
PyTorch's own (F.linear, nn.Linear, torch.sigmoid).

The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from hypothesis import strategies as st
from torch import Tensor

from grader.judge import expect_close as close, expect_gradient as gradient  # noqa: F401 (re-exported)

#: Tolerances any correct implementation meets for these sizes (values O(1), at
#: most 8 input features: float32 rounding error is ~1e-6 whatever the order of
#: the sums). float64 must really be computed in float64.
F32 = {"atol": 1e-5, "rtol": 1e-5}
F64 = {"atol": 1e-10, "rtol": 1e-10}

seeds = st.integers(0, 2**32 - 1)


# --------------------------------------------------------------------------- calls


def call(sandbox, probe: str, *args, **kwargs) -> dict:
    """sandbox.call, checking that the probe's answer is a dict (ours always are)."""
    result = sandbox.call(probe, *args, **kwargs)
    if not isinstance(result, dict):
        raise AssertionError(f"probe {probe!r} returned {result!r}, expected a dict")
    return result


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
    n_lead = draw(st.integers(0, max_lead))
    lead = tuple(draw(st.lists(st.integers(1, 3), min_size=n_lead, max_size=n_lead)))
    return LinearCase(
        lead=lead,
        in_features=draw(st.integers(1, 8)),
        out_features=draw(st.integers(1, 8)),
        bias=draw(st.booleans()) if bias is None else bias,
        seed=draw(seeds),
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
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    return SwishCase(shape=shape, beta=draw(betas), seed=draw(seeds))


# ---------------------------------------------------------------------- references


def linear_reference(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    return F.linear(x, weight, bias)


def swish_reference(x: Tensor, beta) -> Tensor:
    return x * torch.sigmoid(beta * x)


# ---------------------------------------------------------------------- statistics

#: Probability that the uniformity test fails a correct implementation, at most.
FALSE_FAILURE = 1e-7


def ks_distance_uniform(u: Tensor) -> float:
    """Kolmogorov-Smirnov distance between the sample u and the uniform law on [-1, 1]."""
    u, _ = u.double().flatten().sort()
    n = u.numel()
    cdf = ((u + 1) / 2).clamp(0, 1)
    i = torch.arange(1, n + 1, dtype=torch.float64)
    return float(torch.maximum((i / n - cdf).max(), (cdf - (i - 1) / n).max()))  # NaN stays NaN


def ks_threshold(n: int, alpha: float = FALSE_FAILURE) -> float:
    """A distance a sample of n independent uniforms exceeds with probability < alpha.

    Dvoretzky-Kiefer-Wolfowitz with Massart's constant: P(D_n > t) <= 2 exp(-2 n t²),
    for every n and t. 1e-4 is added for float rounding (uniform_ in float32 has
    24-bit resolution, so the sample's CDF is off by ~1e-7 at most).
    """
    return math.sqrt(math.log(2 / alpha) / (2 * n)) + 1e-4
