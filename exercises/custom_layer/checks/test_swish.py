"""Checks for Swish(beta=1.0, learnable=False)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _custom_layer_helpers import (
    TOL,
    SwishCase,
    betas,
    swish_cases,
    swish_reference,
)
from grader.judge import call, expect_close, expect_gradient, expect_tensor

# Covered first on every run: beta other than 1 (a hard-coded beta cannot hide), a
# negative beta, beta = 0, and a 0-d input.
MATRIX = SwishCase(shape=(3, 4), beta=1.5, seed=1)
NEGATIVE = SwishCase(shape=(2, 3, 2), beta=-0.75, seed=2)
FLAT = SwishCase(shape=(5,), beta=0.0, seed=3)
SCALAR = SwishCase(shape=(), beta=2.0, seed=4)
#: beta = 1 always among the examples: whether a drawn case hits it must not decide a verdict.
UNIT = SwishCase(shape=(2, 3), beta=1.0, seed=6)


def _out(result, case: SwishCase, dtype=torch.float32):
    return expect_tensor(result["out"], shape=case.shape, dtype=dtype, name="output")


def _no_parameters(result, what: str) -> None:
    if result["params"]:
        names = [name for name, *_ in result["params"]]
        raise AssertionError(f"{what} must have no parameters, it has {names}")
    if result["state_dict"]:
        raise AssertionError(f"{what} must have an empty state_dict(), it holds {sorted(result['state_dict'])}")


def _check_learnable_beta(result, beta: float) -> None:
    params = [[name, shape] for name, shape, *_ in result["params"]]
    if params != [["beta", []]]:
        raise AssertionError(
            f"Swish(learnable=True) must have exactly one parameter, beta of shape (), got {params} "
            "(name, shape)"
        )
    if result["beta"]["kind"] != "parameter":
        raise AssertionError(f"Swish(learnable=True).beta must be an nn.Parameter, got {result['beta']['kind']}")
    _, _, is_parameter, requires_grad = result["params"][0]
    if not requires_grad:
        raise AssertionError("Swish(learnable=True).beta must require grad")
    state = result["state_dict"]
    if sorted(state) != ["beta"]:
        raise AssertionError(f"Swish(learnable=True).state_dict() must hold exactly 'beta', got {sorted(state)}")
    value = expect_tensor(state["beta"], shape=(), name="state_dict()['beta']")
    if not value.is_floating_point() or float(value) != beta:
        raise AssertionError(f"beta must start at {beta}, got {value!r}")


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Swish(x) = x * sigmoid(beta * x), elementwise; keep x's shape and dtype.")
@given(case=swish_cases())
@example(case=MATRIX)
@example(case=NEGATIVE)
@example(case=FLAT)
@example(case=SCALAR)
@example(case=UNIT)
def test_swish_forward(sandbox, case):
    """Swish: x * sigmoid(beta * x), same shape and dtype, fixed beta"""
    x = case.x()
    result = call(sandbox, "swish", x, args=[case.beta])
    expect_close(_out(result, case), swish_reference(x, case.beta), f"output (beta={case.beta})", tol=TOL)


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint("The default is beta = 1.0, not learnable.")
def test_swish_default_beta(sandbox):
    """Swish(): beta defaults to 1.0"""
    case = SwishCase(shape=(4, 3), beta=1.0, seed=5)
    x = case.x()
    result = call(sandbox, "swish", x)
    expect_close(_out(result, case), swish_reference(x, 1.0), "output of Swish()", tol=TOL)


@pytest.mark.points(1)
@given(case=swish_cases(), learnable=st.booleans())
@example(case=NEGATIVE, learnable=True)
@example(case=MATRIX, learnable=False)
def test_swish_float64(sandbox, case, learnable):
    """Swish: float64 in, float64 out, at float64 precision (fixed or learnable beta)"""
    x = case.x(torch.float64)
    result = call(sandbox, "swish", x, args=[case.beta, learnable])
    expect_close(_out(result, case, torch.float64), swish_reference(x, case.beta), "output (float64)", tol=TOL)


@pytest.mark.points(1)
def test_swish_fixed_beta_has_no_parameters(sandbox):
    """Swish with a fixed beta: no parameters, empty state_dict()"""
    case = MATRIX
    x = case.x()
    for args, what in [(None, "Swish()"), ([1.5], "Swish(1.5)"), ([1.5, False], "Swish(1.5, learnable=False)")]:
        result = call(sandbox, "swish", x, args=args)
        _no_parameters(result, what)
        beta = 1.0 if args is None else 1.5
        expect_close(_out(result, case), swish_reference(x, beta), f"output of {what}", tol=TOL)


@pytest.mark.points(1)
@given(beta=betas)
@example(beta=1.0)
@example(beta=-2.5)
def test_swish_learnable_beta(sandbox, beta):
    """Swish(learnable=True): beta is an nn.Parameter of shape (), starts at beta, is 'beta' in state_dict()"""
    case = SwishCase(shape=(3, 2), beta=beta, seed=6)
    x = case.x()
    result = call(sandbox, "swish", x, args=[beta, True])
    _check_learnable_beta(result, beta)
    expect_close(_out(result, case), swish_reference(x, beta), f"output (beta={beta})", tol=TOL)


@pytest.mark.points(1)
@given(beta=betas, new_beta=betas)
@example(beta=1.0, new_beta=-0.5)
def test_swish_loaded_beta_is_used(sandbox, beta, new_beta):
    """Swish(learnable=True): forward uses the parameter's current value (load_state_dict)"""
    case = SwishCase(shape=(4,), beta=beta, seed=7)
    x = case.x()
    result = call(sandbox, "swish", x, args=[beta, True], load={"beta": torch.tensor(new_beta)})
    expect_close(_out(result, case), swish_reference(x, new_beta),
          f"output after load_state_dict({{'beta': {new_beta}}}) (built with beta={beta})", tol=TOL)


@pytest.mark.points(2)
@given(case=swish_cases(), learnable=st.booleans())
@example(case=MATRIX, learnable=True)
@example(case=SCALAR, learnable=True)
@example(case=NEGATIVE, learnable=False)
def test_swish_gradients(sandbox, case, learnable):
    """Swish: gradients in x, and in beta when learnable, are right"""
    x, grad_out = case.x(), case.grad_out()
    result = call(sandbox, "swish", x, args=[case.beta, learnable], grad_out=grad_out)
    _out(result, case)
    x_ref = x.clone().requires_grad_(True)
    beta_ref = torch.tensor(case.beta, requires_grad=True)
    loss = (swish_reference(x_ref, beta_ref) * grad_out).sum()
    want_x, want_beta = torch.autograd.grad(loss, (x_ref, beta_ref))
    grads = result.get("grads") or {}
    why = result.get("no_grad_reason")
    expect_close(expect_gradient(grads.get("x"), "x", x, why=why), want_x, "gradient of x", tol=TOL)
    if learnable:
        got = grads.get("beta")
        if got is None:
            raise AssertionError(f"no gradient reached beta: {why or 'the output does not depend on it'}")
        got = expect_tensor(got, name="gradient of beta")
        if got.numel() != 1:
            raise AssertionError(f"gradient of beta: expected a single value, got shape {tuple(got.shape)}")
        expect_close(got.reshape(()).to(torch.float32), want_beta, "gradient of beta", atol=1e-4, rtol=1e-4)
