"""Judge-side helpers for the clip_grad_norm checks: gradient lists, the reference, comparisons.

Everything here runs in the trusted judge, where torch.nn.utils.clip_grad_norm_ is the
reference (forbidden APIs are removed only from the sandbox). For an eps other than its built-in
1e-6, the same formula is applied to torch.nn.utils.get_total_norm's total.

max_norm is always drawn as a multiple of the true total norm (``RATIOS``), so the
total is never within 1% of max_norm, nor is total + eps: ``total > max_norm`` and
``max_norm / (total + eps) < 1`` agree in every check.

The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.judge import Tolerance, Tolerances, expect_close, expect_tensor, seeds, shapes

INF = math.inf
DTYPES = {"float32": torch.float32, "float64": torch.float64}
#: Gradients of 0.1 to 10: a norm and a scaled gradient are off by ~1e-6 relative in float32, ~1e-15 in float64.
TOL = Tolerances(float32=Tolerance(atol=1e-6, rtol=1e-5), float64=Tolerance(atol=1e-12, rtol=1e-10))
CLIPS = (0.0, 0.25, 0.5, 0.9)  # max_norm / total: clipping
KEEPS = (1.1, 2.0, 5.0)  # no clipping
DEFAULT_EPS = 1e-6


@dataclass(frozen=True)
class GradCase:
    """Gradients to put on parameters: shapes (None: a parameter without .grad), dtype, values from seed."""

    shapes: tuple
    dtype: str = "float32"
    seed: int = 0

    def grads(self) -> list:
        g = torch.Generator().manual_seed(self.seed)
        out = []
        for i, shape in enumerate(self.shapes):
            if shape is None:
                out.append(None)
                continue
            scale = 10.0 ** (i % 3 - 1)  # 0.1, 1, 10: parameters of different sizes of gradient
            out.append(torch.randn(shape, generator=g, dtype=torch.float64).mul(scale).to(DTYPES[self.dtype]))
        return out


@st.composite
def grad_cases(draw, *, min_size: int = 1, max_size: int = 4, nones: bool = False, dtype: str | None = None):
    n = draw(st.integers(min_size, max_size))
    drawn = [draw(shapes(dims=(1, 2), sides=(1, 4))) for _ in range(n)]
    if nones:
        drawn = [draw(st.sampled_from([s, None])) for s in drawn]
    return GradCase(tuple(drawn), dtype or draw(st.sampled_from(sorted(DTYPES))), draw(seeds()))


def _params(grads: list) -> list:
    params = []
    for g in grads:
        p = torch.zeros(1) if g is None else torch.zeros_like(g)
        p.requires_grad_(True)
        p.grad = None if g is None else g.clone()
        params.append(p)
    return params


def total_norm(grads: list, norm_type: float = 2.0) -> torch.Tensor:
    present = [g for g in grads if g is not None]
    return torch.nn.utils.get_total_norm(present, norm_type) if present else torch.tensor(0.0)


def reference(grads: list, max_norm: float, norm_type: float = 2.0, eps: float = DEFAULT_EPS):
    """(returned total, gradients after) for the contract, from torch's own clip_grad_norm_."""
    params = _params(grads)
    if eps == DEFAULT_EPS:
        total = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type)
    else:
        total = total_norm(grads, norm_type)
        coef = max_norm / (total + eps)
        if coef < 1:  # nan-safe: the reference, on the judge's own gradients
            for p in params:
                if p.grad is not None:
                    p.grad.mul_(coef)
    return total, [p.grad for p in params]


def max_norm_for(grads: list, norm_type: float, ratio: float) -> float:
    return float(total_norm(grads, norm_type)) * ratio


def describe(case: GradCase, max_norm: float, norm_type, eps, pass_as: str = "list") -> str:
    eps_text = "" if eps is None else f", eps={eps}"
    return (f"clip_grad_norm({pass_as} of parameters with grads of shapes {list(case.shapes)} ({case.dtype}), "
            f"max_norm={max_norm:.6g}, norm_type={norm_type}{eps_text})")


def check(sandbox, case: GradCase, max_norm: float, norm_type=2.0, eps=None, *, pass_as: str = "list",
          what: str = "all") -> None:
    """One call, compared with the reference: the returned total, then every gradient (``what``)."""
    grads = case.grads()
    kwargs = {} if norm_type == 2.0 and eps is None else {"norm_type": norm_type}
    if eps is not None:
        kwargs["eps"] = eps
    result = sandbox.call("clip", grads, max_norm, pass_as=pass_as, **kwargs)
    want_total, want_grads = reference(grads, max_norm, norm_type, DEFAULT_EPS if eps is None else eps)
    call = describe(case, max_norm, norm_type, eps, pass_as)
    if what in ("all", "total"):
        got = expect_tensor(result["total"], shape=(), dtype=want_total.dtype, name=f"the value returned by {call}")
        expect_close(got, want_total, f"the total norm returned by {call} (the norm before clipping)", tol=TOL)
    if what in ("all", "grads"):
        check_grads(result, grads, want_grads, call)


def check_grads(result: dict, grads: list, want_grads: list, call: str) -> None:
    for i, (got, before, want) in enumerate(zip(result["grads"], grads, want_grads)):
        name = f"parameter {i}'s .grad after {call}"
        if want is None:
            if got is not None:
                raise AssertionError(f"{name}: expected None (it had no gradient), got a value")
            continue
        got = expect_tensor(got, shape=tuple(want.shape), dtype=want.dtype, name=name)
        if torch.equal(want, before):  # not clipped: untouched, bit for bit
            if not torch.equal(got, before):
                raise AssertionError(f"{name}: the total norm is not above max_norm, so the gradient must be "
                                     f"left untouched; it changed from {before.tolist()} to {got.tolist()}")
        else:
            expect_close(got, want, name, tol=TOL)
