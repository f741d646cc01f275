"""Judge-side helpers for the autograd_function checks: inputs, torch.clamp's answers, comparisons.

Everything here runs in the trusted judge, where torch.clamp may be used freely (forbidden
APIs are removed only from the sandbox): the expected values and gradients are torch.clamp's
own, so "torch.clamp's convention at the bounds" is literally the reference.

Inputs are multiples of 1/8 in [-2, 2] and bounds multiples of 1/16, so every
comparison with a bound is exact in float32 and float64: a tie happens exactly when a
check wants one (bounds on the 1/8 grid) and never otherwise (bounds off it).

The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.judge import EXACT, expect_close, expect_gradient, expect_tensor

DTYPES = {"float32": torch.float32, "float64": torch.float64}

#: bounds ON the inputs' 1/8 grid (ties happen) and OFF it (odd multiples of 1/16: no tie)
on_grid = st.integers(-12, 12).map(lambda k: k / 8)
off_grid = st.integers(-12, 11).map(lambda k: (2 * k + 1) / 16)


def ordered(a: float | None, b: float | None) -> tuple[float | None, float | None]:
    """(min, max) with min <= max when both are given."""
    if a is not None and b is not None and a > b:
        return b, a
    return a, b


def inputs(shape, seed: int, dtype=torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """x: multiples of 1/8 in [-2, 2]; grad_out: random values (never 0, so a zeroed gradient shows)."""
    g = torch.Generator().manual_seed(seed)
    x = (torch.randint(-16, 17, shape, generator=g) / 8).to(dtype)
    grad_out = (torch.rand(shape, generator=g, dtype=torch.float64) + 0.5).to(dtype)
    sign = torch.randint(0, 2, shape, generator=g).to(dtype) * 2 - 1
    return x, grad_out * sign


def expected(x: torch.Tensor, grad_out: torch.Tensor, lower, upper) -> tuple[torch.Tensor, torch.Tensor]:
    """torch.clamp's output and gradient (torch.clamp with both None is the identity)."""
    leaf = x.clone().requires_grad_(True)
    out = leaf.clone() if lower is None and upper is None else torch.clamp(leaf, lower, upper)
    out.backward(grad_out)
    return out.detach(), leaf.grad


def describe(x: torch.Tensor, lower, upper, via: str = "clamp") -> str:
    call = "Clamp.apply" if via == "apply" else "clamp"
    values = x.tolist() if x.numel() <= 12 else f"a {tuple(x.shape)} tensor"
    return f"{call}(x={values} ({x.dtype}), min={lower!r}, max={upper!r})"


def check_forward(result: dict, x: torch.Tensor, lower, upper, via: str = "clamp") -> None:
    want, _ = expected(x, torch.ones_like(x), lower, upper)
    what = describe(x, lower, upper, via)
    out = expect_tensor(result["out"], shape=tuple(x.shape), dtype=x.dtype, name=f"output of {what}")
    expect_close(out, want, f"output of {what}", tol=EXACT)


def check_gradient(result: dict, x: torch.Tensor, grad_out: torch.Tensor, lower, upper,
                   via: str = "clamp") -> None:
    _, want = expected(x, grad_out, lower, upper)
    what = describe(x, lower, upper, via)
    grad = expect_gradient(result["grad"], f"x in {what}", x, why="x.grad is None after out.backward(grad_out)")
    expect_close(grad, want, f"x.grad after {what}.backward(grad_out={grad_out.tolist() if grad_out.numel() <= 12 else '...'})",
                 tol=EXACT)


def run_and_check(sandbox, x, grad_out, lower, upper, via: str = "clamp") -> None:
    """Forward values and gradient of one call, both compared with torch.clamp's."""
    result = sandbox.call("run", x, grad_out, lower, upper, via=via)
    check_forward(result, x, lower, upper, via)
    check_gradient(result, x, grad_out, lower, upper, via)
