"""Checks for CustomLinear(in_features, out_features, bias=True)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import example, given
from torch import nn

from _custom_layer_helpers import (
    TOL,
    LinearCase,
    linear_cases,
    linear_reference,
)
from grader.judge import (
    call,
    candidate_raises,
    expect_bounded,
    expect_close,
    expect_fits,
    expect_gradient,
    expect_tensor,
    ks_uniform,
)

# Covered first on every run: a 1-D input (no leading dims), in != out (a
# transposed weight cannot hide), several leading dims, and in == out (where a
# transposed weight has the right shape but the wrong values).
VECTOR = LinearCase(lead=(), in_features=3, out_features=5, bias=True, seed=1)
BATCHED = LinearCase(lead=(2, 3), in_features=4, out_features=2, bias=True, seed=2)
DEEP = LinearCase(lead=(2, 1, 3), in_features=2, out_features=3, bias=False, seed=3)
SQUARE = LinearCase(lead=(4,), in_features=3, out_features=3, bias=True, seed=4)


def _forward(sandbox, case: LinearCase, *, dtype=torch.float32, grads=False):
    """Run the candidate's layer with the case's weights; return (result, weight, bias, x, grad_out)."""
    weight, bias, x, g = case.tensors(dtype)
    kwargs = {}
    if grads:
        kwargs["grad_out"] = torch.randn(case.out_shape, generator=g, dtype=dtype)
    result = call(sandbox, "linear_forward", case.in_features, case.out_features, weight, bias, x, **kwargs)
    return result, weight, bias, x, kwargs.get("grad_out")


def _out(result, case: LinearCase, dtype=torch.float32):
    return expect_tensor(result["out"], shape=case.out_shape, dtype=dtype, name="output")


def _expected_params(in_features: int, out_features: int, bias: bool) -> list:
    want = [["weight", [out_features, in_features]]]
    if bias:
        want.append(["bias", [out_features]])
    return sorted(want)


def _check_parameters(report: dict, in_features: int, out_features: int, bias: bool, called: str = "") -> None:
    """``called``: how the layer was built, when not ``CustomLinear(in, out, bias=bias)``."""
    if not report["is_module"]:
        raise AssertionError("CustomLinear must be an nn.Module")
    got = sorted([name, shape] for name, shape, _, _ in report["params"])
    want = _expected_params(in_features, out_features, bias)
    if got != want:
        raise AssertionError(
            f"{called or f'CustomLinear({in_features}, {out_features}, bias={bias})'}: named_parameters() must be "
            f"exactly {want} (name, shape), got {got}"
        )
    for name, _, is_parameter, requires_grad in report["params"]:
        if not is_parameter or not requires_grad:
            raise AssertionError(f"{name} must be an nn.Parameter that requires grad")
    for name in ("weight", "bias") if bias else ("weight",):
        if report[name]["kind"] != "parameter":
            raise AssertionError(
                f"the attribute {name} must be an nn.Parameter, got {report[name]['kind']}"
            )


def _check_state_dict_keys(state: dict, in_features: int, out_features: int, bias: bool) -> dict:
    want = {"weight": (out_features, in_features)}
    if bias:
        want["bias"] = (out_features,)
    if sorted(state) != sorted(want):
        raise AssertionError(
            f"state_dict() keys must be {sorted(want)} as in nn.Linear, got {sorted(state)}"
        )
    return {
        k: expect_tensor(state[k], shape=shape, dtype=torch.float32, name=f"state_dict()[{k!r}]")
        for k, shape in want.items()
    }


# ------------------------------------------------------------------------ forward


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Multiply along the last dim only, so that any number of leading dims works, none "
    "included: a 1-D x of in_features values gives a 1-D result of out_features values."
)
@given(case=linear_cases())
@example(case=VECTOR)
@example(case=BATCHED)
@example(case=DEEP)
def test_linear_output_shape(sandbox, case):
    """CustomLinear: x (*, in_features) -> (*, out_features), 1-D x included"""
    result, _, _, _, _ = _forward(sandbox, case)
    _out(result, case)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("y = x @ weightᵀ + bias, with weight of shape (out_features, in_features).")
@given(case=linear_cases(bias=True))
@example(case=VECTOR)
@example(case=BATCHED)
@example(case=SQUARE)
def test_linear_forward(sandbox, case):
    """CustomLinear: forward = x @ weightᵀ + bias"""
    result, weight, bias, x, _ = _forward(sandbox, case)
    expect_close(_out(result, case), linear_reference(x, weight, bias), "output", tol=TOL)


@pytest.mark.points(1)
@given(case=linear_cases())
@example(case=SQUARE)
@example(case=DEEP)
def test_linear_float64(sandbox, case):
    """CustomLinear: float64 layer and input give float64, at float64 precision"""
    result, weight, bias, x, _ = _forward(sandbox, case, dtype=torch.float64)
    expect_close(_out(result, case, torch.float64), linear_reference(x, weight, bias), "output (float64)", tol=TOL)


@pytest.mark.points(2)
@given(case=linear_cases())
@example(case=BATCHED)
@example(case=VECTOR)
def test_linear_gradients(sandbox, case):
    """CustomLinear: gradients reach x, weight and bias, and are right"""
    result, weight, bias, x, grad_out = _forward(sandbox, case, grads=True)
    _out(result, case)
    leaves = {"x": x, "weight": weight, **({"bias": bias} if bias is not None else {})}
    leaves = {n: t.detach().clone().requires_grad_(True) for n, t in leaves.items()}
    out = linear_reference(leaves["x"], leaves["weight"], leaves.get("bias"))
    expected = dict(zip(leaves, torch.autograd.grad((out * grad_out).sum(), list(leaves.values()))))
    grads = result.get("grads") or {}
    why = result.get("no_grad_reason")
    for name, want in expected.items():
        got = expect_gradient(grads.get(name), name, want, why=why)
        expect_close(got, want, f"gradient of {name}", tol=TOL)


# ---------------------------------------------------------------------- structure


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Register weight (out_features, in_features) and bias (out_features,) as nn.Parameter "
    "attributes, so that named_parameters() and optimizers see them."
)
def test_linear_parameters(sandbox):
    """CustomLinear: weight (out, in) and bias (out,) are its nn.Parameters, and only they"""
    for in_features, out_features in [(3, 5), (4, 4), (1, 2)]:
        # No bias argument: the contract's default is bias=True, so the bias must be there.
        report = call(sandbox, "linear_build", in_features, out_features)
        _check_parameters(report, in_features, out_features, bias=True,
                          called=f"CustomLinear({in_features}, {out_features}) (bias defaults to True)")


@pytest.mark.points(1)
@given(case=linear_cases(bias=False))
@example(case=DEEP)
@example(case=LinearCase(lead=(2,), in_features=3, out_features=3, bias=False, seed=5))
def test_linear_without_bias(sandbox, case):
    """CustomLinear(bias=False): bias is None, in neither parameters() nor state_dict(); y = x @ weightᵀ"""
    report = call(sandbox, "linear_build", case.in_features, case.out_features, False)
    if report["bias"]["kind"] != "none":
        raise AssertionError(
            f"with bias=False the attribute bias must be None, got {report['bias']['kind']}"
        )
    _check_parameters(report, case.in_features, case.out_features, bias=False)
    _check_state_dict_keys(report["state_dict"], case.in_features, case.out_features, bias=False)
    result, weight, bias, x, _ = _forward(sandbox, case)
    expect_close(_out(result, case), linear_reference(x, weight, None), "output without bias", tol=TOL)


@pytest.mark.points(1)
@given(case=linear_cases())
@example(case=VECTOR)
@example(case=DEEP)
def test_state_dict_loads_into_nn_linear(sandbox, case):
    """CustomLinear's state_dict loads into nn.Linear (strict=True); both compute the same"""
    _, _, x, _ = case.tensors()
    report = call(sandbox, "linear_build", case.in_features, case.out_features, case.bias,
                  seed=case.seed % 1000, x=x)
    state = _check_state_dict_keys(report["state_dict"], case.in_features, case.out_features, case.bias)
    reference = nn.Linear(case.in_features, case.out_features, bias=case.bias)
    try:
        reference.load_state_dict(state, strict=True)
    except RuntimeError as e:
        raise AssertionError(f"nn.Linear.load_state_dict(strict=True) refused it: {e}") from None
    with torch.no_grad():
        expected = reference(x)
    out = expect_tensor(report.get("out"), shape=case.out_shape, dtype=torch.float32, name="output")
    expect_close(out, expected, "output compared with nn.Linear holding the same state_dict", tol=TOL)


@pytest.mark.points(1)
@given(case=linear_cases())
@example(case=SQUARE)
@example(case=DEEP)
def test_state_dict_from_nn_linear(sandbox, case):
    """nn.Linear's state_dict loads into CustomLinear (strict=True); both compute the same"""
    weight, bias, x, _ = case.tensors()
    reference = nn.Linear(case.in_features, case.out_features, bias=case.bias)
    with torch.no_grad():
        reference.weight.copy_(weight)
        if case.bias:
            reference.bias.copy_(bias)
        expected = reference(x)
    result = call(sandbox, "linear_load", case.in_features, case.out_features, case.bias,
                  {k: v.clone() for k, v in reference.state_dict().items()}, x)
    expect_close(_out(result, case), expected, "output after loading nn.Linear's state_dict", tol=TOL)


@pytest.mark.points(1)
def test_extra_repr(sandbox):
    """CustomLinear: extra_repr() is 'in_features=I, out_features=O, bias=B' as in nn.Linear"""
    for in_features, out_features, bias in [(3, 5, True), (7, 2, False), (1, 1, True)]:
        report = call(sandbox, "linear_build", in_features, out_features, bias)
        want = f"in_features={in_features}, out_features={out_features}, bias={bias}"
        if report["extra_repr"] != want:
            raise AssertionError(
                f"CustomLinear({in_features}, {out_features}, bias={bias}).extra_repr() must be "
                f"{want!r}, got {report['extra_repr']!r}"
            )


@pytest.mark.points(1)
def test_rejects_bad_sizes(sandbox):
    """CustomLinear: ValueError naming in_features / out_features when one is below 1"""
    for in_features, out_features, name in [(0, 3, "in_features"), (-2, 3, "in_features"),
                                            (3, 0, "out_features"), (4, -1, "out_features")]:
        with candidate_raises("ValueError", match=name, what=f"CustomLinear({in_features}, {out_features})"):
            call(sandbox, "linear_build", in_features, out_features)


# ------------------------------------------------------------------ initialisation

#: Layers whose initial values are tested: in != out both ways, so that a bound from
#: out_features or from in + out cannot pass; ~10^5 weights and ~10^3 biases in all.
INIT_LAYERS = [[64, 256, True]] * 3 + [[256, 64, True]] * 3 + [[200, 8, False]] * 2


@pytest.mark.points(2)
def test_initialisation_distribution(sandbox):
    """CustomLinear: weight and bias start uniform on [-1/√in_features, 1/√in_features]

    The bounds are checked exactly (up to float32 rounding), the shape of the
    distribution with a Kolmogorov-Smirnov test whose threshold a correct
    implementation exceeds with probability below 1e-7 (DKW inequality).
    """
    result = call(sandbox, "linear_init", INIT_LAYERS, seed=12345)
    pooled = {"weight": [], "bias": []}
    for i, (in_features, out_features, bias) in enumerate(INIT_LAYERS):
        bound = 1 / math.sqrt(in_features)
        layer = f"CustomLinear({in_features}, {out_features}, bias={bias})"
        tensors = [("weight", result["weights"][i], (out_features, in_features))]
        if bias:
            tensors.append(("bias", result["biases"][i], (out_features,)))
        for name, value, shape in tensors:
            t = expect_tensor(value, shape=shape, dtype=torch.float32, name=f"{layer}.{name}")
            expect_bounded(t.abs().max(), at_most=bound * (1 + 1e-6), name=f"{layer}.{name}: the largest magnitude",
                           note=f"the values must lie in [-1/√{in_features}, 1/√{in_features}] = "
                                f"[-{bound:.5g}, {bound:.5g}]")
            pooled[name].append(t.double().flatten() / bound)
    for name, parts in pooled.items():
        u = torch.cat(parts)
        expect_fits(
            u, ks_uniform,
            name=f"the initial {name} values (all layers, each divided by its bound 1/√in_features): "
                 f"Kolmogorov-Smirnov distance from uniform on [-1, 1]",
            note=f"mean {float(u.mean()):.3f}, expected 0; variance {float(u.var()):.3f}, expected 1/3",
        )
