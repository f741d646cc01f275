"""Judge-side helpers for the lora_linear checks: cases, reference maths, result checks.

The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from hypothesis import strategies as st
from torch import Tensor

from grader.judge import Tolerances, call, expect_close, expect_returned, expect_tensor, seeds, shapes

#: The presets: values O(1), at most 6 features and rank 4, float32 rounding stays far below them.
TOL = Tolerances()

ALPHAS = (0.5, 1.0, 2.0, 3.0, 4.0, 8.0, 16.0)
#: The README's "alpha may come as an int": the whole ones among ALPHAS, as Python ints.
INT_ALPHAS = (1, 2, 3, 4, 8, 16)


@dataclass(frozen=True)
class Case:
    in_features: int
    out_features: int
    r: int
    alpha: float
    bias: bool
    lead: tuple[int, ...]
    seed: int

    def tensors(self, dtype=torch.float32) -> dict:
        """weight, bias (None without one), A, B, x, grad_out, new_weight, new_bias: drawn from the seed."""
        g = torch.Generator().manual_seed(self.seed)

        def randn(*shape):
            return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)

        o, i, r = self.out_features, self.in_features, self.r
        return {
            "weight": randn(o, i),
            "bias": randn(o) if self.bias else None,
            "A": randn(r, i),
            "B": randn(o, r),
            "x": randn(*self.lead, i),
            "grad_out": randn(*self.lead, o),
            "new_weight": randn(o, i),
            "new_bias": randn(o) if self.bias else None,
        }

    def describe(self) -> str:
        return (f"LoRALinear(nn.Linear({self.in_features}, {self.out_features}, bias={self.bias}), "
                f"r={self.r}, alpha={self.alpha}), x of shape {(*self.lead, self.in_features)}")


@st.composite
def cases(draw, *, bias=None, alphas=ALPHAS) -> Case:
    return Case(
        in_features=draw(st.integers(1, 6)),
        out_features=draw(st.integers(1, 6)),
        r=draw(st.integers(1, 4)),
        alpha=draw(st.sampled_from(alphas)),
        bias=draw(st.booleans()) if bias is None else bias,
        lead=draw(shapes(dims=(0, 2), sides=(1, 3))),
        seed=draw(seeds()),
    )


# Covered first on every run: r != alpha, r != 1, in != out, scaling != 1 (so that
# alpha vs alpha/r vs r/alpha and a transposed A or B all show).
PLAIN = Case(in_features=4, out_features=3, r=2, alpha=8.0, bias=True, lead=(5,), seed=1)
NO_BIAS = Case(in_features=3, out_features=5, r=3, alpha=2.0, bias=False, lead=(2, 2), seed=2)
VECTOR = Case(in_features=2, out_features=4, r=4, alpha=1.0, bias=True, lead=(), seed=3)
#: An int alpha that r does not divide: alpha // r (1) and alpha / r (1.5) differ.
INT_ALPHA = Case(in_features=4, out_features=3, r=2, alpha=3, bias=True, lead=(5,), seed=4)


# ------------------------------------------------------------------------ reference


def reference(t: dict, case: Case) -> Tensor:
    """x Wᵀ + b + (alpha / r) x Aᵀ Bᵀ."""
    scaling = case.alpha / case.r
    return F.linear(t["x"], t["weight"], t["bias"]) + scaling * (t["x"] @ t["A"].T @ t["B"].T)


def reference_grads(t: dict, case: Case) -> dict:
    """Gradients of sum(forward(x) * grad_out) with respect to A and B."""
    A = t["A"].clone().requires_grad_(True)
    B = t["B"].clone().requires_grad_(True)
    out = F.linear(t["x"], t["weight"], t["bias"]) + (case.alpha / case.r) * (t["x"] @ A.T @ B.T)
    gA, gB = torch.autograd.grad((out * t["grad_out"]).sum(), [A, B])
    return {"lora_A": gA, "lora_B": gB}


def merged_weight(t: dict, case: Case) -> Tensor:
    return t["weight"] + (case.alpha / case.r) * (t["B"] @ t["A"])


# ------------------------------------------------------------------------- results


def call_lora(sandbox, probe: str, *args, **kwargs) -> dict:
    """``call``, for the probes that set A and B; fails clearly when they could not be set."""
    return expect_returned(call(sandbox, probe, *args, **kwargs), function="LoRALinear(base, r, alpha)",
                           returns="a layer holding lora_A (r, in_features) and lora_B (out_features, r) tensors "
                                   "(the checks copy their chosen values into them)")


def output(value, case: Case, what: str, dtype=torch.float32) -> Tensor:
    return expect_tensor(value, shape=(*case.lead, case.out_features), dtype=dtype, name=what)


def close(actual: Tensor, expected: Tensor, what: str, case: Case) -> None:
    expect_close(actual, expected, f"{what}, {case.describe()}", tol=TOL)
