"""Checks for RMSNorm(dim, eps=1e-6)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _rmsnorm_rope_helpers import TOL, NormCase, norm_cases, reference_rmsnorm, rmsnorm_forward
from grader.judge import EXACT, call, expect_close, expect_equal, expect_gradient, expect_tensor

# Cases every run covers first: single small vectors where eps matters (the default, a large eps), x of
# order 1 with the default eps, a batch with a custom eps.
SMALL_X = NormCase(lead=(), dim=6, eps=None, scale=1e-3, seed=1)
LARGE_EPS = NormCase(lead=(), dim=4, eps=0.25, scale=0.05, seed=2)
PLAIN = NormCase(lead=(2, 1, 3), dim=5, eps=None, scale=1.0, seed=3)
SMALL_EPS = NormCase(lead=(3,), dim=4, eps=1e-2, scale=0.05, seed=4)


def _expect_output(report: dict, case: NormCase, weight, x, what: str) -> None:
    expected = reference_rmsnorm(x, weight, case.eps)
    eps = "the default eps" if case.eps is None else f"eps={case.eps}"
    expect_close(report["out"], expected, f"RMSNorm({case.dim}, {eps})(x){what}", tol=TOL)


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint("weight is an nn.Parameter of shape (dim,) filled with ones (torch.ones(dim)), and the module "
                  "has no other parameter: no bias, no learnable eps.")
@given(dim=st.integers(1, 16), eps=st.sampled_from([None, 1e-2]))
@example(dim=5, eps=None)
def test_rmsnorm_weight_is_a_parameter_of_ones(sandbox, dim, eps):
    """RMSNorm: weight is an nn.Parameter of shape (dim,), initialised to ones, the only parameter"""
    report = call(sandbox, "rmsnorm_build", dim, eps)
    expect_equal(report.get("is_module"), True, name="RMSNorm is an nn.Module")
    expect_equal(report.get("params"), [["weight", [dim], True, True]],
                 name="named_parameters() as [name, shape, is an nn.Parameter, requires_grad]")
    weight = expect_tensor(report.get("weight"), shape=(dim,), dtype=torch.float32, name="weight")
    expect_close(weight, torch.ones(dim), "initial weight", tol=EXACT)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Normalise over the last dim only: x / sqrt(mean(x**2, dim=-1, keepdim=True) + eps) * weight, "
                  "with eps inside the square root and no mean subtracted.")
# The default eps on rows of 4 or more values of order 1: eps is negligible here (a mistake about it
# shows in the eps check, not in this one).
@given(case=norm_cases(min_dim=4, scales=(1.0, 10.0), epsilons=(None,)))
@example(case=PLAIN)
def test_rmsnorm_forward(sandbox, case):
    """RMSNorm: y = x / sqrt(mean(x²) + eps) * weight over the last dim (float32)"""
    weight, x, _ = case.tensors()
    report = rmsnorm_forward(sandbox, case, weight, x)
    _expect_output(report, case, weight, x, "")


@pytest.mark.points(1)
@given(case=norm_cases(lead_dims=(0, 0), scales=(1e-3, 1e-2, 0.05)))
@example(case=SMALL_X)
@example(case=LARGE_EPS)
def test_rmsnorm_eps_inside_the_square_root(sandbox, case):
    """RMSNorm: eps (default 1e-6) is added inside the square root

    On single small vectors, where eps is not negligible against mean(x²).
    """
    weight, x, _ = case.tensors()
    report = rmsnorm_forward(sandbox, case, weight, x)
    _expect_output(report, case, weight, x, f" on a small vector (scale {case.scale})")


@pytest.mark.points(1)
@given(case=norm_cases())
@example(case=SMALL_EPS)
def test_rmsnorm_float64(sandbox, case):
    """RMSNorm: float64 in, float64 out, at float64 precision"""
    weight, x, _ = case.tensors(torch.float64)
    report = rmsnorm_forward(sandbox, case, weight, x)
    _expect_output(report, case, weight, x, " (float64)")


@pytest.mark.points(1)
@given(case=norm_cases(), dtype=st.sampled_from([torch.float32, torch.float64]), row=st.integers(0, 2**16))
@example(case=PLAIN, dtype=torch.float32, row=0)
def test_rmsnorm_zero_rows(sandbox, case, dtype, row):
    """RMSNorm: an all-zero row gives an all-zero row, never NaN"""
    weight, x, _ = case.tensors(dtype)
    rows = x.reshape(-1, case.dim)
    rows[row % rows.shape[0]] = 0.0
    report = rmsnorm_forward(sandbox, case, weight, x)
    out = expect_tensor(report["out"], shape=x.shape, dtype=dtype, name="RMSNorm(x) with an all-zero row")
    dead = out.reshape(-1, case.dim)[row % rows.shape[0]]
    expect_close(dead, torch.zeros_like(dead), "the all-zero row's output", tol=EXACT)


@pytest.mark.points(2)
@given(case=norm_cases(scales=(0.5, 1.0, 3.0)), dtype=st.sampled_from([torch.float32, torch.float64]))
@example(case=PLAIN, dtype=torch.float32)
@example(case=SMALL_EPS, dtype=torch.float64)
def test_rmsnorm_gradients(sandbox, case, dtype):
    """RMSNorm: gradients in x and weight match a reference (float32 and float64)

    With a random upstream gradient on the output.
    """
    weight, x, g = case.tensors(dtype)
    grad_out = torch.randn(x.shape, generator=g, dtype=dtype)
    report = rmsnorm_forward(sandbox, case, weight, x, grad_out=grad_out)
    xr, wr = x.clone().requires_grad_(True), weight.clone().requires_grad_(True)
    want_x, want_w = torch.autograd.grad((reference_rmsnorm(xr, wr, case.eps) * grad_out).sum(), (xr, wr))
    why = report.get("no_grad_reason")
    expect_close(expect_gradient(report.get("grad_x"), "x", x, why=why), want_x, "gradient of x", tol=TOL)
    expect_close(expect_gradient(report.get("grad_weight"), "weight", weight, why=why), want_w,
                 "gradient of weight", tol=TOL)
