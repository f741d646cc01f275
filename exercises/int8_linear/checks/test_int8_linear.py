"""Checks for QuantLinear.from_float(linear): symmetric per-row int8 weights, float32 scales and bias."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _int8_linear_helpers import (
    bias,
    built,
    check_forward,
    check_half_step,
    check_int8,
    check_scale,
    inputs,
    judge_dequant,
    kind,
    weight,
)
from grader.judge import expect_bounded, expect_close, expect_equal, expect_tensor, seeds

sizes = st.integers(1, 8)
leading = st.lists(st.integers(1, 3), max_size=2)


def _build(sandbox, w, b):
    return built(sandbox.call("build", w, b))


# ------------------------------------------------------------------ storage


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Use self.register_buffer('weight_int8', ...), register_buffer('scale', ...) and "
                  "register_buffer('bias', ...) (None without a bias), not nn.Parameter: the state_dict then "
                  "holds exactly those keys, weight_int8 as torch.int8 and scale and bias as float32.")
@given(seed=seeds(), out_features=sizes, in_features=sizes, has_bias=st.booleans())
@example(seed=1, out_features=3, in_features=4, has_bias=True)
@example(seed=2, out_features=2, in_features=5, has_bias=False)
def test_int8_buffers(sandbox, seed, out_features, in_features, has_bias):
    """weight_int8 (int8), scale and bias (float32) are buffers: the state_dict carries them, no parameters"""
    w = weight(seed, out_features, in_features)
    b = bias(seed, out_features) if has_bias else None
    r = _build(sandbox, w, b)
    where = f"from_float(nn.Linear({in_features}, {out_features}, bias={has_bias}))"
    expect_equal(r["features"], [in_features, out_features], name=f"{where}: [in_features, out_features]")
    keys = ["bias", "scale", "weight_int8"] if has_bias else ["scale", "weight_int8"]
    expect_equal(sorted(r["state_dict"]), keys, name=f"{where}: state_dict keys")
    expect_equal(r["parameters"], [], name=f"{where}: nn.Parameters of the layer (everything is a buffer)")
    expect_equal(r["buffers"], keys, name=f"{where}: registered buffers")
    expect_equal(r["requires_grad"], [], name=f"{where}: tensors that require grad")
    expect_tensor(r["state_dict"]["weight_int8"], shape=(out_features, in_features), dtype=torch.int8,
                  name=f"{where}: state_dict['weight_int8']")
    expect_tensor(r["state_dict"]["scale"], shape=(out_features,), dtype=torch.float32,
                  name=f"{where}: state_dict['scale']")
    if has_bias:
        expect_tensor(r["state_dict"]["bias"], shape=(out_features,), dtype=torch.float32,
                      name=f"{where}: state_dict['bias']")
    elif r["bias"] is not None:
        raise AssertionError(f"{where}: without a bias, layer.bias must be None, got {kind(r['bias'])}")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("scale = W.abs().amax(dim=1) / 127: one float32 scale per output row (dim 0 of the weight), "
                  "not one for the whole matrix.")
@given(seed=seeds(), out_features=sizes, in_features=sizes)
@example(seed=3, out_features=4, in_features=3)
def test_scale_per_row(sandbox, seed, out_features, in_features):
    """scale[i] = max |W[i, :]| / 127, one float32 per output row"""
    w = weight(seed, out_features, in_features)
    r = _build(sandbox, w, None)
    check_scale(r["scale"], w, f"a ({out_features}, {in_features}) weight with rows of magnitudes 1e-3 to 1e2")


@pytest.mark.points(2)
@given(seed=seeds(), out_features=sizes, in_features=sizes)
@example(seed=4, out_features=3, in_features=8)
def test_rounds_to_nearest(sandbox, seed, out_features, in_features):
    """weight_int8 is W / scale rounded to the nearest integer, largest entry of each row exactly +-127"""
    w = weight(seed, out_features, in_features, single=(0,))
    r = _build(sandbox, w, None)
    q = check_int8(r["weight_int8"], w, f"a ({out_features}, {in_features}) weight (row 0 has one non-zero entry)")
    expect_equal(q.abs().amax(dim=1).tolist(), [127] * out_features,
                 name="max |weight_int8| of each row (the row's largest entry maps to +-127)")


@pytest.mark.points(1)
def test_symmetric_range(sandbox):
    """The range is symmetric: -128 is never used, a row whose largest entry is negative gets -127"""
    w = weight(5, 4, 5, negative_max=(0, 1, 2, 3))
    r = _build(sandbox, w, None)
    q = check_int8(r["weight_int8"], w, "a (4, 5) weight whose rows all have a negative largest entry")
    expect_equal(q.amin(dim=1).tolist(), [-127] * 4, name="min of each row of weight_int8")


@pytest.mark.points(2)
@given(seed=seeds(), out_features=sizes, in_features=sizes)
@example(seed=6, out_features=6, in_features=2)
def test_dequantize_within_half_step(sandbox, seed, out_features, in_features):
    """dequantize() is weight_int8 * scale, within half a quantisation step of W in every row"""
    w = weight(seed, out_features, in_features)
    r = sandbox.call("run", w, None, [])
    build = _build(sandbox, w, None)
    where = f"a ({out_features}, {in_features}) weight with rows of magnitudes 1e-3 to 1e2"
    q = expect_tensor(build["weight_int8"], shape=tuple(w.shape), dtype=torch.int8, name=f"{where}: weight_int8")
    scale = expect_tensor(build["scale"], shape=(out_features,), dtype=torch.float32, name=f"{where}: scale")
    check_half_step(q, scale, w, where)
    deq = expect_tensor(r["dequantize"], shape=tuple(w.shape), dtype=torch.float32, name=f"{where}: dequantize()")
    expect_close(deq, q.to(torch.float32) * scale[:, None], f"{where}: dequantize()", atol=0.0, rtol=1e-6,
                 note="dequantize() = weight_int8.float() * scale[:, None]")


@pytest.mark.points(2)
def test_zero_rows(sandbox):
    """All-zero rows get a positive finite scale, int8 zeros and an output of exactly the bias, no NaN"""
    cases = [(weight(7, 4, 3, zero_rows=(1, 3)), bias(7, 4)),
             (weight(8, 3, 5, zero_rows=(0,)), None),
             (torch.zeros(2, 4), bias(9, 2)),
             (torch.zeros(3, 3), None)]
    for w, b in cases:
        zero = w.abs().amax(dim=1) == 0
        where = f"a ({w.shape[0]}, {w.shape[1]}) weight with all-zero rows {zero.nonzero()[:, 0].tolist()}" \
                f"{'' if b is not None else ', no bias'}"
        r = _build(sandbox, w, b)
        check_scale(r["scale"], w, where)
        check_int8(r["weight_int8"], w, where)
        xs = inputs(10, w.shape[1], [[3]])
        out = sandbox.call("run", w, b, xs)["outputs"][0]
        out = expect_tensor(out, shape=(3, w.shape[0]), dtype=torch.float32, name=f"{where}: forward(x)")
        want = torch.zeros(3, int(zero.sum())) if b is None else b[zero].expand(3, -1)
        expect_close(out[:, zero], want, f"{where}: outputs of the all-zero rows", atol=0.0, rtol=0.0,
                     note="an all-zero row contributes exactly 0: the output there is exactly the bias")
        check_forward(out, w, b, xs[0], where)


# ------------------------------------------------------------------ forward


@pytest.mark.points(3)
@pytest.mark.visibility("visible")
@pytest.mark.hint("forward(x) = x @ (weight_int8.float() * scale[:, None]).T + bias, for x of shape "
                  "(*, in_features); a 1-D x has no leading dims.")
@given(seed=seeds(), out_features=sizes, in_features=sizes, lead=leading, has_bias=st.booleans())
@example(seed=11, out_features=3, in_features=4, lead=[2], has_bias=True)
@example(seed=12, out_features=2, in_features=3, lead=[], has_bias=False)
@example(seed=13, out_features=5, in_features=2, lead=[2, 3], has_bias=True)
def test_forward_matches(sandbox, seed, out_features, in_features, lead, has_bias):
    """forward(x) = x @ dequant(W).T + b for any leading dims, and changes no buffer"""
    w = weight(seed, out_features, in_features)
    b = bias(seed, out_features) if has_bias else None
    xs = inputs(seed, in_features, [lead])
    r = sandbox.call("run", w, b, xs)
    where = f"nn.Linear({in_features}, {out_features}, bias={has_bias}), x of shape {tuple(xs[0].shape)}"
    check_forward(r["outputs"][0], w, b, xs[0], where)
    for key, before in r["state_before"].items():
        expect_equal(r["state_after"].get(key), before, name=f"{where}: state_dict[{key!r}] after forward")


@pytest.mark.points(1)
def test_forward_float64(sandbox):
    """A float64 input is computed in and returned as float64"""
    w, b = weight(14, 3, 4), bias(14, 3)
    xs = [x.double() for x in inputs(14, 4, [[2], []])]
    r = sandbox.call("run", w, b, xs)
    for x, got in zip(xs, r["outputs"]):
        check_forward(got, w, b, x, f"a float64 x of shape {tuple(x.shape)}", rtol=1e-6)


@pytest.mark.points(1)
def test_bias_kept_in_float(sandbox):
    """The bias is a float32 copy of linear.bias: equal to it, and not changed when the linear layer is"""
    w, b = weight(15, 4, 3), bias(15, 4)
    r = _build(sandbox, w, b)
    got = expect_tensor(r["bias"], shape=(4,), dtype=torch.float32, name="layer.bias")
    expect_close(got, b, "layer.bias", atol=0.0, rtol=0.0, note="the bias is kept exactly, in float32")
    xs = inputs(15, 3, [[2]])
    rt = sandbox.call("round_trip", w, b, xs)
    expect_close(expect_tensor(rt["after_linear_changed"][0], shape=(2, 4), name="forward(x)"),
                 expect_tensor(rt["original"][0], shape=(2, 4), name="forward(x)"),
                 "forward(x) after linear.weight and linear.bias were changed in place", atol=0.0, rtol=0.0,
                 note="the QuantLinear must hold copies: a change to the nn.Linear afterwards changes nothing")


# ------------------------------------------------------------------ memory and state_dict


@pytest.mark.points(2)
@given(seed=seeds(), out_features=st.integers(2, 8), in_features=st.integers(2, 8), has_bias=st.booleans())
@example(seed=16, out_features=8, in_features=8, has_bias=True)
def test_no_float_weight_kept(sandbox, seed, out_features, in_features, has_bias):
    """No float copy of the weight is kept: the layer holds int8 weights, scale and bias bytes only"""
    w = weight(seed, out_features, in_features)
    b = bias(seed, out_features) if has_bias else None
    x = inputs(seed, in_features, [[2]])[0]
    r = sandbox.call("memory", w, b, x)
    if r["weight_alive"] is not False:
        raise AssertionError("the nn.Linear's weight is still alive after the caller dropped the layer: "
                             "the QuantLinear holds a reference to it")
    want = out_features * in_features + 4 * out_features + (4 * out_features if has_bias else 0)
    for when in ("built", "after_forward"):
        held = r[when]
        total = expect_bounded(held["total"], name=f"bytes held {when.replace('_', ' ')}", types=(int,),
                               allow_tensor=False)
        if total != want:
            shown = "; ".join(f"{where}: {dtype} {shape}, {n} bytes" for where, dtype, shape, n in held["tensors"][:8])
            raise AssertionError(f"nn.Linear({in_features}, {out_features}, bias={has_bias}): the QuantLinear holds "
                                 f"{total} bytes of tensors {when.replace('_', ' ')}, expected {want} (int8 weight "
                                 f"+ float32 scale{' + float32 bias' if has_bias else ''}): {shown}")


@pytest.mark.points(2)
@given(seed=seeds(), out_features=sizes, in_features=sizes, has_bias=st.booleans())
@example(seed=17, out_features=3, in_features=5, has_bias=True)
def test_state_dict_round_trip(sandbox, seed, out_features, in_features, has_bias):
    """QuantLinear(in, out, bias) loads a from_float layer's state_dict and then gives the same outputs"""
    w = weight(seed, out_features, in_features)
    b = bias(seed, out_features) if has_bias else None
    xs = inputs(seed, in_features, [[3]])
    r = sandbox.call("round_trip", w, b, xs)
    built = f"QuantLinear({in_features}, {out_features}{'' if has_bias else ', bias=False'})"  # a bias: the default
    where = f"{built}.load_state_dict(from_float(...).state_dict())"
    check_forward(r["fresh"][0], w, b, xs[0], where)


@pytest.mark.points(1)
def test_leaves_linear_unchanged(sandbox):
    """from_float leaves the nn.Linear's weight and bias as they were"""
    w, b = weight(18, 3, 4), bias(18, 3)
    r = _build(sandbox, w, b)
    got_w, got_b = r["linear_after"]
    expect_close(expect_tensor(got_w, shape=(3, 4), dtype=torch.float32, name="linear.weight after from_float"),
                 w, "linear.weight after from_float", atol=0.0, rtol=0.0)
    expect_close(expect_tensor(got_b, shape=(3,), dtype=torch.float32, name="linear.bias after from_float"),
                 b, "linear.bias after from_float", atol=0.0, rtol=0.0)
