"""Checks for init_weights(module) and initialize(model, seed)."""

from __future__ import annotations

import pytest
import torch

from _init_weights_helpers import (
    BIAS_FREE_CONVS,
    BIAS_FREE_LINEARS,
    CONVS,
    LINEARS,
    NESTED_CONVS,
    NESTED_LINEARS,
    NORM_DEFAULTS,
    NORMS,
    OTHERS,
    SENTINEL,
    STD_TOLERANCE,
    entries,
    kaiming_fan_out_std,
    preset_values,
    sentinel_values,
    state_of,
    weight,
    xavier_bound,
)
from grader.judge import expect_bounded, expect_equal, expect_fits, expect_scalar, expect_tensor, ks_normal, ks_uniform

SEED = 2024


def _applied(sandbox, **kwargs) -> dict:
    return state_of(sandbox.call("init_zoo", SEED, via="apply", **kwargs))


def _check_bounds(state: dict, linears: dict) -> None:
    for name, shape in linears.items():
        w, a = weight(state, name, shape), xavier_bound(shape)
        expect_bounded(w.abs().max(), at_most=a * (1 + 1e-6), name=f"{name}.weight {shape}: the largest magnitude",
                       note=f"the Xavier-uniform range is [-a, a], a = sqrt(6 / (fan_in + fan_out)) = {a:.4f}")


def _check_untouched(state: dict, want: dict, what: str) -> None:
    for name, value in want.items():
        expect_equal(state.get(name), value, name=f"{name} changed: {what} must be left untouched")


# -------------------------------------------------------------------- linear


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Xavier (Glorot) uniform draws from U(-a, a) with a = sqrt(6 / (fan_in + fan_out)), gain 1.")
def test_linear_weights_within_xavier_bound(sandbox):
    """Linear weights lie in [-a, a], a = sqrt(6 / (fan_in + fan_out))"""
    _check_bounds(_applied(sandbox), LINEARS)


@pytest.mark.points(2)
def test_linear_weights_are_xavier_uniform(sandbox):
    """Linear weights, divided by a, are uniform on [-1, 1] (Kolmogorov-Smirnov)"""
    state = _applied(sandbox)
    _check_bounds(state, LINEARS)
    u = torch.cat([(weight(state, n, s) / xavier_bound(s)).flatten() for n, s in LINEARS.items()])
    expect_fits(u, ks_uniform, name="Linear weights / a: Kolmogorov-Smirnov distance from uniform on [-1, 1]",
                note="a correct Xavier-uniform stays below the limit")


# ---------------------------------------------------------------------- conv


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Kaiming normal with mode='fan_out' and nonlinearity='relu': std = sqrt(2 / fan_out), "
                  "fan_out = out_channels * prod(kernel_size). Conv1d, Conv2d and Conv3d alike.")
def test_conv_weights_have_kaiming_fan_out_std(sandbox):
    """Conv1d/2d/3d weights have standard deviation sqrt(2 / fan_out) (within 10%)"""
    state = _applied(sandbox)
    for name, shape in CONVS.items():
        w, std = weight(state, name, shape), kaiming_fan_out_std(shape)
        expect_scalar(float(w.double().std()), std, rtol=STD_TOLERANCE, name=f"{name}.weight {shape}: standard deviation",
                      note=f"sqrt(2 / fan_out), fan_out = {shape[0]} * {list(shape[2:])}, within 10%")


@pytest.mark.points(2)
def test_conv_weights_are_kaiming_normal(sandbox):
    """Conv weights, divided by sqrt(2 / fan_out), are standard normal (Kolmogorov-Smirnov)"""
    state = _applied(sandbox)
    z = torch.cat([(weight(state, n, s) / kaiming_fan_out_std(s)).flatten() for n, s in CONVS.items()])
    expect_fits(z, ks_normal,
                name="conv weights / sqrt(2 / fan_out): Kolmogorov-Smirnov distance from the standard normal",
                note="a correct Kaiming-normal (fan_out) stays below the limit")


# -------------------------------------------------------------------- biases


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Set the bias of every Linear and Conv layer to zero.")
def test_biases_are_zero(sandbox):
    """Linear and conv biases are all 0"""
    state = _applied(sandbox)
    for name, shape in {**LINEARS, **CONVS}.items():
        b = expect_tensor(state.get(f"{name}.bias"), shape=(shape[0],), dtype=torch.float32, name=f"{name}.bias")
        if bool((b != 0).any()):
            raise AssertionError(f"{name}.bias must be all zeros, got {b[:4].tolist()}...")


@pytest.mark.points(1)
def test_layers_without_bias(sandbox):
    """Layers built with bias=False get their weights initialised, without error"""
    preset = sentinel_values(BIAS_FREE_LINEARS, BIAS_FREE_CONVS, bias=False)
    state = _applied(sandbox, preset=preset, bias_free=True)
    # Initialised or not, only: which values is the Xavier and Kaiming checks' rule.
    for name, shape in {**BIAS_FREE_LINEARS, **BIAS_FREE_CONVS}.items():
        if bool((weight(state, name, shape) == SENTINEL).any()):
            raise AssertionError(f"the weight of a bias-free layer ({name}) was not initialised")


# -------------------------------------------------------------------- others


@pytest.mark.points(2)
def test_norm_layers_untouched(sandbox):
    """BatchNorm, LayerNorm and GroupNorm keep their weight, bias and running statistics"""
    state = _applied(sandbox)
    defaults = {name: torch.full(shape, NORM_DEFAULTS[name.rsplit(".", 1)[1]])
                for name, shape in entries(NORMS).items()}
    _check_untouched(state, defaults, "normalisation layers (here at their defaults)")
    preset = preset_values(NORMS, seed=5)
    _check_untouched(_applied(sandbox, preset=preset), preset, "normalisation layers (here preset)")


@pytest.mark.points(1)
def test_other_modules_untouched(sandbox):
    """Embedding, ConvTranspose1d and a custom module's own weight and bias are untouched"""
    preset = preset_values(OTHERS, seed=6)
    _check_untouched(_applied(sandbox, preset=preset), preset,
                     "modules other than Linear and Conv1d/2d/3d (Embedding, ConvTranspose1d, a custom module)")


# ---------------------------------------------------------------- initialize


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("initialize must reach every module, however deeply nested: model.apply does that.")
def test_initialize_reaches_nested_modules(sandbox):
    """initialize(model, seed) initialises layers nested in containers, and returns the model itself"""
    preset = sentinel_values(NESTED_LINEARS, NESTED_CONVS)
    result = sandbox.call("init_zoo", SEED, via="initialize", preset=preset)
    state = state_of(result)
    if result["returned_model"] is not True:
        raise AssertionError("initialize(model, seed) must return the model it was given (the same object)")
    # Reached or not, only: which values a reached layer gets is the Xavier, Kaiming and bias checks' rule.
    for name, shape in {**NESTED_LINEARS, **NESTED_CONVS}.items():
        if bool((weight(state, name, shape) == SENTINEL).any()):
            raise AssertionError(f"{name}, nested two containers deep, was not initialised by initialize()")


@pytest.mark.points(2)
def test_initialize_is_reproducible(sandbox):
    """Same seed, same weights (whatever the random state before); another seed, other weights; in place"""
    first = sandbox.call("init_zoo", 7, via="initialize", build_seed=1)
    again = sandbox.call("init_zoo", 7, via="initialize", build_seed=2)
    other = sandbox.call("init_zoo", 8, via="initialize", build_seed=1)
    if not first["same_parameters"]:
        raise AssertionError("initialize must work in place: the model's parameters must stay the same objects, "
                             "requiring grad")
    names = [f"{n}.{k}" for n in {**LINEARS, **CONVS, **NESTED_LINEARS, **NESTED_CONVS} for k in ("weight", "bias")]
    a, b, c = state_of(first), state_of(again), state_of(other)
    for name in names:
        x = expect_tensor(a.get(name), name=name)
        y = expect_tensor(b.get(name), shape=tuple(x.shape), dtype=x.dtype, name=name)
        if not torch.equal(x, y):
            raise AssertionError(f"{name} differs between two initialize(model, seed=7) calls on models of the same "
                                 "architecture (built under different random states)")
    if all(torch.equal(a[f"{n}.weight"], c[f"{n}.weight"]) for n in LINEARS):
        raise AssertionError("initialize(model, 7) and initialize(model, 8) gave the same weights: the seed is "
                             "not used")
