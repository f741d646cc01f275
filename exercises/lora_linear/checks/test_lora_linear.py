"""Checks for LoRALinear(base, r, alpha)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from hypothesis import example, given

from _lora_linear_helpers import (
    INT_ALPHA,
    INT_ALPHAS,
    NO_BIAS,
    PLAIN,
    VECTOR,
    Case,
    call_lora,
    cases,
    close,
    merged_weight,
    output,
    reference,
    reference_grads,
)
from grader.judge import CandidateError, call, candidate_raises, expect_gradient, expect_tensor


def _build(sandbox, case: Case) -> tuple[dict, dict]:
    t = case.tensors()
    result = call_lora(sandbox, "lora_build", t["weight"], t["bias"], case.r, case.alpha, t["x"])
    return result, t


def _forward(sandbox, case: Case, dtype=torch.float32, **extra) -> tuple[dict, dict]:
    t = case.tensors(dtype)
    kwargs = {k: t[k] for k in extra}
    result = call_lora(sandbox, "lora_forward", t["weight"], t["bias"], case.r, case.alpha, t["A"], t["B"], t["x"],
                       **kwargs)
    return result, t


# ---------------------------------------------------------------- construction


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Start lora_B at zeros: then the low-rank term is zero and the layer equals its base.")
@given(case=cases())
@example(case=PLAIN)
@example(case=NO_BIAS)
def test_equals_base_at_construction(sandbox, case):
    """At construction the layer's output equals base(x) (lora_B starts at zero)"""
    result, _ = _build(sandbox, case)
    got = output(result["out"], case, "layer(x) right after construction")
    want = output(result["base_out"], case, "base(x)")
    close(got, want, "layer(x) right after construction must equal base(x)", case)


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint("lora_A is (r, in_features), lora_B is (out_features, r), in the base weight's dtype; "
                  "B is zeros; A is initialised (finite, not all zeros), not left as torch.empty.")
@given(case=cases())
@example(case=PLAIN)
def test_adapter_shapes_and_init(sandbox, case):
    """lora_A (r, in) initialised (finite, not all zero), lora_B (out, r) all zero, both in state_dict

    The layer is built with uninitialised memory reading as NaN (the probe), so a lora_A
    left as torch.empty fails here every time, not only when its memory happens to be bad.
    """
    result, _ = _build(sandbox, case)
    what = case.describe()
    A = expect_tensor(result["A"], shape=(case.r, case.in_features), dtype=torch.float32, name=f"lora_A of {what}")
    B = expect_tensor(result["B"], shape=(case.out_features, case.r), dtype=torch.float32, name=f"lora_B of {what}")
    if bool((B != 0).any()):
        raise AssertionError(f"lora_B must start at zeros, got {B.tolist()} ({what})")
    if not bool((A != 0).any()):
        raise AssertionError(f"lora_A must not start all zeros (then no gradient ever reaches lora_B) ({what})")
    missing = [k for k in ("lora_A", "lora_B", "base.weight") if k not in result["state_keys"]]
    if missing:
        raise AssertionError(f"state_dict() lacks {missing}; its keys are {result['state_keys']}")


@pytest.mark.points(1)
@given(case=cases())
@example(case=NO_BIAS)
def test_adapters_take_the_base_dtype(sandbox, case):
    """lora_A and lora_B are created in the base weight's dtype (a float64 base gives float64 adapters)"""
    t = case.tensors(torch.float64)
    result = call_lora(sandbox, "lora_build", t["weight"], t["bias"], case.r, case.alpha, t["x"])
    what = f"{case.describe()} with a float64 base"
    expect_tensor(result["A"], shape=(case.r, case.in_features), dtype=torch.float64, name=f"lora_A of {what}")
    expect_tensor(result["B"], shape=(case.out_features, case.r), dtype=torch.float64, name=f"lora_B of {what}")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Keep the base layer object itself (no copy) and set requires_grad False on its "
                  "weight and bias; forward must read them at call time.")
@given(case=cases())
@example(case=PLAIN)
@example(case=NO_BIAS)
def test_base_is_frozen_and_shared(sandbox, case):
    """The base is the same object, frozen, and forward uses its current weight and bias"""
    result, _ = _build(sandbox, case)
    if not result["same_base"] or not result["same_tensors"]:
        raise AssertionError("layer.base must be the nn.Linear given, holding its own weight and bias "
                             "(no copy, no new Parameter)")
    if any(result["frozen"]):
        raise AssertionError("the base's weight and bias must be frozen: requires_grad is still True on "
                             "the nn.Linear given")
    result, t = _forward(sandbox, case, new_weight=True, new_bias=True)
    after = dict(t, weight=t["new_weight"], bias=t["new_bias"])
    close(output(result["out_after"], case, "layer(x) after the base changed"), reference(after, case),
          "layer(x) after the base's weight and bias were changed in place", case)


@pytest.mark.points(2)
@given(case=cases())
@example(case=PLAIN)
@example(case=NO_BIAS)
def test_only_adapters_are_trainable(sandbox, case):
    """The trainable parameters are exactly lora_A and lora_B: r * (in + out) values"""
    result, _ = _build(sandbox, case)
    names = sorted(n for n, _ in result["trainable"])
    count = sum(k for _, k in result["trainable"])
    want = case.r * (case.in_features + case.out_features)
    if names != ["lora_A", "lora_B"] or count != want:
        raise AssertionError(f"parameters with requires_grad=True must be exactly lora_A and lora_B "
                             f"({want} values) for {case.describe()}; got {result['trainable']}")


@pytest.mark.points(1)
def test_rejects_bad_rank(sandbox):
    """ValueError naming r when r < 1"""
    weight, bias = torch.zeros(2, 3), torch.zeros(2)
    for r in (0, -2):
        with candidate_raises("ValueError", match=r"\br\b", what=f"LoRALinear(nn.Linear(3, 2), r={r}, alpha=4.0)"):
            sandbox.call("lora_init", weight, bias, r, 4.0)


# --------------------------------------------------------------------- forward


@pytest.mark.points(3)
@given(case=cases())
@example(case=PLAIN)
@example(case=NO_BIAS)
@example(case=VECTOR)
def test_forward_with_scaling(sandbox, case):
    """forward = x Wᵀ + b + (alpha / r) x Aᵀ Bᵀ, any leading dims, 1-D x included"""
    result, t = _forward(sandbox, case)
    close(output(result["out"], case, "layer(x)"), reference(t, case), "layer(x)", case)


@pytest.mark.points(1)
@given(case=cases())
@example(case=NO_BIAS)
def test_float64(sandbox, case):
    """A float64 base and input give float64, at float64 precision"""
    result, t = _forward(sandbox, case, torch.float64)
    close(output(result["out"], case, "layer(x) in float64", torch.float64), reference(t, case),
          "layer(x) in float64", case)


@pytest.mark.points(1)
@given(case=cases(alphas=INT_ALPHAS))
@example(case=INT_ALPHA)
def test_alpha_may_be_an_int(sandbox, case):
    """alpha given as an int (3, not 3.0) works as the same float does: forward and merge"""
    as_float = replace(case, alpha=float(case.alpha))
    what = f"alpha={case.alpha} (an int)"
    try:
        out, t = _forward(sandbox, case)
        merged, _ = _merge(sandbox, case)
    except CandidateError as e:
        raise AssertionError(f"{case.describe()}: with {what} your code raised {e}; alpha may come as an int "
                             "or a float") from None
    out_float, _ = _forward(sandbox, as_float)
    merged_float, _ = _merge(sandbox, as_float)
    close(output(out["out"], case, f"layer(x) with {what}"),
          output(out_float["out"], case, f"layer(x) with alpha={as_float.alpha}"),
          f"layer(x) with {what} must equal layer(x) with alpha={as_float.alpha}", case)
    shape = (case.out_features, case.in_features)
    close(expect_tensor(merged["weight"], shape=shape, dtype=torch.float32, name=f"merged weight with {what}"),
          expect_tensor(merged_float["weight"], shape=shape, dtype=torch.float32,
                        name=f"merged weight with alpha={as_float.alpha}"),
          f"merge()'s weight with {what} must equal that with alpha={as_float.alpha}", case)


@pytest.mark.points(2)
@given(case=cases())
@example(case=PLAIN)
@example(case=NO_BIAS)
def test_gradients_reach_only_the_adapters(sandbox, case):
    """Gradients reach lora_A and lora_B (the right values), never the base's weight or bias"""
    result, t = _forward(sandbox, case, grad_out=True)
    grads = result["grads"]
    for name in ("base.weight", "base.bias"):
        if grads[name] is not None:
            raise AssertionError(f"a gradient reached {name}: the base must be frozen ({case.describe()})")
    for name, want in reference_grads(t, case).items():
        got = expect_gradient(grads[name], name, want, why="lora_A and lora_B must be used by forward")
        close(got, want, f"gradient of {name}", case)


# ----------------------------------------------------------------------- merge


def _merge(sandbox, case: Case) -> tuple[dict, dict]:
    t = case.tensors()
    result = call_lora(sandbox, "lora_merge", t["weight"], t["bias"], case.r, case.alpha, t["A"], t["B"], t["x"])
    return result, t


@pytest.mark.points(3)
@given(case=cases())
@example(case=PLAIN)
@example(case=NO_BIAS)
def test_merge_gives_an_equivalent_linear(sandbox, case):
    """merge() returns a plain nn.Linear: weight W + (alpha/r) B A, the base's bias (or none), same outputs"""
    result, t = _merge(sandbox, case)
    what = case.describe()
    if result["cls"] != "torch.nn.modules.linear.Linear":
        raise AssertionError(f"merge() must return a plain nn.Linear, got {result['cls']}")
    if (result["in_features"], result["out_features"]) != (case.in_features, case.out_features):
        raise AssertionError(f"merged layer: in/out_features {result['in_features']}, {result['out_features']}, "
                             f"expected {case.in_features}, {case.out_features}")
    weight = expect_tensor(result["weight"], shape=(case.out_features, case.in_features), dtype=torch.float32,
                           name="merged weight")
    close(weight, merged_weight(t, case), "merged weight (W + alpha/r * B @ A)", case)
    if t["bias"] is None:
        if result["bias"] is not None:
            raise AssertionError(f"the base has no bias, so the merged layer must have none (bias None); {what}")
    else:
        bias = expect_tensor(result["bias"], shape=(case.out_features,), dtype=torch.float32, name="merged bias")
        close(bias, t["bias"], "merged bias (the base's)", case)
    close(output(result["merged_out"], case, "merged(x)"), reference(t, case), "merged(x)", case)


@pytest.mark.points(1)
@given(case=cases())
@example(case=NO_BIAS)
def test_merge_keeps_the_base_dtype(sandbox, case):
    """merge() of a layer with a float64 base gives a float64 nn.Linear (weight and bias)"""
    t = case.tensors(torch.float64)
    result = call_lora(sandbox, "lora_merged_tensors", t["weight"], t["bias"], case.r, case.alpha, t["A"], t["B"])
    what = f"{case.describe()} with a float64 base"
    for name in ("weight", "bias"):
        if result[name] is None and name == "bias":
            continue  # whether a bias belongs there is test_merge_gives_an_equivalent_linear's rule
        got = expect_tensor(result[name], finite=False, name=f"merge()'s {name}, {what}")
        if got.dtype != torch.float64:
            raise AssertionError(f"{what}: merge()'s {name} is {got.dtype}; the merged nn.Linear must have the "
                                 "base's dtype, torch.float64 (pass dtype= when you build it)")


@pytest.mark.points(2)
@given(case=cases())
@example(case=PLAIN)
@example(case=NO_BIAS)
def test_merge_leaves_the_layer_unchanged(sandbox, case):
    """merge() changes nothing in the LoRA layer, and the merged layer shares no memory with it"""
    result, t = _merge(sandbox, case)
    want = reference(t, case)
    close(output(result["out_before"], case, "layer(x) before merge()"), want, "layer(x) before merge()", case)
    close(expect_tensor(result["base_weight"], shape=tuple(t["weight"].shape), dtype=torch.float32,
                        name="base weight after merge()"),
          t["weight"], "the base's weight after merge() (must not change)", case)
    close(output(result["out_after"], case, "layer(x) after merge()"), want, "layer(x) after merge()", case)
    close(output(result["out_after_edit"], case, "layer(x) after editing the merged layer"), want,
          "layer(x) after the merged layer's weight and bias were changed in place", case)


@pytest.mark.points(1)
@given(case=cases())
@example(case=PLAIN)
@example(case=NO_BIAS)
def test_merge_works_with_autograd_on(sandbox, case):
    """merge() also works with autograd on, as in the README's example, and gives what it gives under no_grad"""
    t = case.tensors()
    args = (t["weight"], t["bias"], case.r, case.alpha, t["A"], t["B"])
    quiet = call_lora(sandbox, "lora_merged_tensors", *args)
    try:
        loud = call_lora(sandbox, "lora_merged_tensors", *args, grad_enabled=True)
    except CandidateError as e:
        raise AssertionError(f"{case.describe()}: merge() called with autograd on (as in the README's example, "
                             f"not under torch.no_grad()) raised {e}; build the merged weights under "
                             "torch.no_grad() inside merge(), or from detached tensors") from None
    for name in ("weight", "bias"):
        want = quiet[name]
        if type(want) is not torch.Tensor:
            continue  # what merge() must hold there is test_merge_gives_an_equivalent_linear's rule
        got = expect_tensor(loud[name], finite=False, name=f"merge()'s {name} with autograd on")
        close(got, want, f"merge()'s {name} with autograd on must equal the one under torch.no_grad()", case)
