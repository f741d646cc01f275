"""Goodness of fit for random initialisations: Kolmogorov-Smirnov distances and a threshold.

A check of "drawn from U(-a, a)" cannot compare values: it measures the largest gap between the
sample's empirical CDF and the law's, and fails above a threshold a correct implementation exceeds
with probability at most ``FALSE_FAILURE`` (Dvoretzky-Kiefer-Wolfowitz with Massart's constant:
``P(D_n > t) <= 2 exp(-2 n t²)``). ``expect_fits`` compares through ``expect_bounded``: a NaN in the
sample gives a NaN distance, which fails.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from grader.judge.numbers import expect_bounded

#: Probability that a goodness-of-fit check fails a correct implementation, at most.
FALSE_FAILURE = 1e-7


def ks_threshold(n: int, alpha: float = FALSE_FAILURE) -> float:
    """A distance a sample of ``n`` independent draws from the law exceeds with probability below ``alpha``.

    1e-4 is added for float rounding (float32 draws have 24-bit resolution, so the
    sample's CDF is off by ~1e-7 at most).
    """
    return math.sqrt(math.log(2 / alpha) / (2 * n)) + 1e-4


def ks_uniform(u: Tensor) -> float:
    """Kolmogorov-Smirnov distance between the sample ``u`` and the uniform law on [-1, 1]."""
    u, _ = u.double().flatten().sort()
    return _ks(((u + 1) / 2).clamp(0, 1))


def ks_normal(z: Tensor) -> float:
    """Kolmogorov-Smirnov distance between the sample ``z`` and the standard normal law."""
    z, _ = z.double().flatten().sort()
    return _ks(0.5 * (1 + torch.special.erf(z / math.sqrt(2))))


def expect_fits(sample: Tensor, distance: Callable[[Tensor], float], *, name: str, note: str) -> None:
    """Fail unless ``distance(sample)`` (``ks_uniform``, ``ks_normal``) is within ``ks_threshold(sample.numel())``.

    One helper, because every goodness-of-fit check is these same three steps and each
    is easy to get subtly wrong by hand: the threshold must be the one for the number
    of values actually measured, the comparison must fail on a NaN distance
    (``expect_bounded``), and the message must say how many values were measured
    (``over N values; `` starts the note: a distance means little without it).
    """
    n = sample.numel()
    expect_bounded(distance(sample), at_most=ks_threshold(n), name=name, note=f"over {n} values; {note}")


def _ks(sorted_cdf: Tensor) -> float:
    """The distance, from the law's CDF at each sorted sample point."""
    n = sorted_cdf.numel()
    i = torch.arange(1, n + 1, dtype=torch.float64)
    return float(torch.maximum((i / n - sorted_cdf).max(), (sorted_cdf - (i - 1) / n).max()))  # NaN stays NaN
