"""Checks for MultiHeadAttention(d_model, n_heads, bias=True)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _attention_helpers import (
    MHA_MASK_LAYOUTS,
    PROJECTIONS,
    TOL,
    MhaCase,
    attend,
    block_some_rows,
    expected_mha,
    mha_cases,
    mha_mask_shape,
    outputs,
    random_mask,
    rows_fully_blocked,
    torch_mha,
)
from grader.judge import call, candidate_raises, expect_close, expect_gradient

# Covered first on every run: several heads, L != S, d_head > 1 (a wrong head
# split or a scale by d_model cannot hide).
CROSS = MhaCase(B=2, L=3, S=4, n_heads=2, d_head=3, seed=1)
MANY_HEADS = MhaCase(B=1, L=2, S=3, n_heads=4, d_head=2, seed=2)


def _mask(case: MhaCase, layout: str | None, g: torch.Generator, *, block_rows=False):
    if layout is None:
        return None
    mask = random_mask(mha_mask_shape(layout, case.B, case.n_heads, case.L, case.S), g)
    return block_some_rows(mask, g) if block_rows else mask


def _forward(sandbox, case: MhaCase, layout=None, *, bias=True, block_rows=False, grads=False):
    """Run the candidate's module; return (result, params, query, key, value, mask, upstream)."""
    params, query, key, value, g = case.tensors()
    if not bias:
        params = {n: t for n, t in params.items() if n.endswith(".weight")}
    mask = _mask(case, layout, g, block_rows=block_rows)
    upstream = {}
    if grads:
        upstream = {
            "grad_out": torch.randn(case.B, case.L, case.d_model, generator=g),
            "grad_weights": torch.randn(case.B, case.n_heads, case.L, case.S, generator=g),
        }
    args = (query, key, value) if mask is None else (query, key, value, mask)
    result = attend(sandbox, "mha_forward", case.d_model, case.n_heads, params, *args,
                  bias=bias, **upstream)
    return result, params, query, key, value, mask, upstream


def _outputs(result, case: MhaCase):
    return outputs(
        result,
        out_shape=(case.B, case.L, case.d_model),
        weights_shape=(case.B, case.n_heads, case.L, case.S),
        dtype=torch.float32,
    )


def _compare(result, case, params, query, key, value, mask, *, bias=True, what=""):
    out, weights = _outputs(result, case)
    expected_out, expected_weights = expected_mha(case, params, query, key, value, mask, bias=bias)
    expect_close(weights, expected_weights, f"weights{what}", tol=TOL)
    expect_close(out, expected_out, f"out{what}", tol=TOL)
    return out, weights


def _expected_params(d_model: int, bias: bool) -> list[list]:
    names = [f"{p}.weight" for p in PROJECTIONS] + ([f"{p}.bias" for p in PROJECTIONS] if bias else [])
    return sorted([n, [d_model, d_model] if n.endswith("weight") else [d_model]] for n in names)


def _check_structure(report: dict, d_model: int, bias: bool, built: str = "") -> None:
    built = built or f"bias={bias}"
    if not report["is_module"]:
        raise AssertionError("MultiHeadAttention must be an nn.Module")
    for name in PROJECTIONS:
        info = report["projections"][name]
        if not info["is_linear"]:
            raise AssertionError(f"{name} must be an nn.Linear, got {info['type']}")
        if (info["in_features"], info["out_features"]) != (d_model, d_model):
            raise AssertionError(
                f"{name} must map d_model={d_model} to d_model, got "
                f"nn.Linear({info['in_features']}, {info['out_features']})"
            )
        if info["has_bias"] != bias:
            raise AssertionError(f"{name} must {'have' if bias else 'not have'} a bias with {built}")
    got = sorted(report["params"])
    want = _expected_params(d_model, bias)
    if got != want:
        extra = sorted({n for n, _ in got} - {n for n, _ in want})
        missing = sorted({n for n, _ in want} - {n for n, _ in got})
        raise AssertionError(
            f"parameters must be exactly {[n for n, _ in want]}"
            + (f"; unexpected: {extra}" if extra else "")
            + (f"; missing: {missing}" if missing else "")
            + ("" if extra or missing else f"; shapes differ: got {got}")
        )


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "The module's parameters are listed by named_parameters(): only the four projections "
    "named in the prompt may appear there, each mapping d_model features to d_model."
)
def test_mha_projections(sandbox):
    """MHA: W_q, W_k, W_v, W_o: nn.Linear(d_model, d_model), no other parameters"""
    for d_model, n_heads in [(12, 3), (4, 4), (5, 1)]:
        report = call(sandbox, "mha_build", d_model, n_heads)  # bias left out: the default must be True
        _check_structure(report, d_model, bias=True, built="bias left at its default (True)")


@pytest.mark.points(1)
def test_mha_rejects_n_heads_below_one(sandbox):
    """MHA: ValueError naming n_heads when n_heads < 1"""
    for n_heads in (0, -2):
        with candidate_raises("ValueError", match="n_heads", what=f"MultiHeadAttention(8, n_heads={n_heads})"):
            call(sandbox, "mha_build", 8, n_heads)


@pytest.mark.points(1)
def test_mha_rejects_indivisible_d_model(sandbox):
    """MHA: ValueError when d_model % n_heads != 0"""
    for d_model, n_heads in [(10, 4), (8, 3), (6, 4)]:
        with candidate_raises("ValueError", match="d_model|n_heads",
                              what=f"MultiHeadAttention(d_model={d_model}, n_heads={n_heads})"):
            call(sandbox, "mha_build", d_model, n_heads)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Head h must read features [h*d_head, (h+1)*d_head) of each projection: check the order "
    "of your reshapes and transposes, and which size the scores are scaled by."
)
@given(case=mha_cases())
@example(case=CROSS)
@example(case=MANY_HEADS)
def test_mha_matches_torch(sandbox, case):
    """MHA: Matches nn.MultiheadAttention (cross-attention, no mask)"""
    result, params, query, key, value, mask, _ = _forward(sandbox, case)
    _compare(result, case, params, query, key, value, mask)


@pytest.mark.points(2)
@given(case=mha_cases(), layout=st.sampled_from(MHA_MASK_LAYOUTS))
@example(case=CROSS, layout="LS")
@example(case=CROSS, layout="B11S")
@example(case=MANY_HEADS, layout="BHLS")
def test_mha_masks(sandbox, case, layout):
    """MHA: (L, S) and 4-D masks match nn.MultiheadAttention"""
    result, params, query, key, value, mask, _ = _forward(sandbox, case, layout)
    _compare(result, case, params, query, key, value, mask, what=f" (mask of shape {tuple(mask.shape)})")


@pytest.mark.points(1)
@given(case=mha_cases(), layout=st.sampled_from(["B11S", "LS", "BHLS", "B1LS"]))
@example(case=CROSS, layout="B11S")
def test_mha_fully_blocked_rows(sandbox, case, layout):
    """MHA: Fully blocked rows (all padding): zero weights, no NaN"""
    result, params, query, key, value, mask, _ = _forward(sandbox, case, layout, block_rows=True)
    _, weights = _outputs(result, case)  # finite: no NaN
    dead = rows_fully_blocked(mask, weights.shape)
    if bool((weights[dead] != 0).any()):
        raise AssertionError("weights of a (head, query) row whose keys are all blocked must all be 0")
    _compare(result, case, params, query, key, value, mask)


@pytest.mark.points(1)
@given(case=mha_cases())
@example(case=CROSS)
def test_mha_without_bias(sandbox, case):
    """MHA: bias=False: no biases, still matches nn.MultiheadAttention"""
    _check_structure(call(sandbox, "mha_build", case.d_model, case.n_heads, bias=False),
                     case.d_model, bias=False)
    result, params, query, key, value, mask, _ = _forward(sandbox, case, bias=False)
    _compare(result, case, params, query, key, value, mask, bias=False, what=" (bias=False)")


def _torch_grads(case: MhaCase, params, query, key, value, mask, upstream) -> dict:
    ref = torch_mha(case.d_model, case.n_heads, params)
    query, key, value = (t.detach().clone().requires_grad_(True) for t in (query, key, value))
    attn_mask = None
    if mask is not None:
        full = mask.expand(case.B, case.n_heads, case.L, case.S)
        attn_mask = (~full).reshape(case.B * case.n_heads, case.L, case.S)
    out, weights = ref(query, key, value, attn_mask=attn_mask, need_weights=True,
                       average_attn_weights=False)
    loss = (out * upstream["grad_out"]).sum() + (weights * upstream["grad_weights"]).sum()
    loss.backward()
    w_q, w_k, w_v = ref.in_proj_weight.grad.chunk(3)
    b_q, b_k, b_v = ref.in_proj_bias.grad.chunk(3)
    return {
        "grad_query": query.grad, "grad_key": key.grad, "grad_value": value.grad,
        "W_q.weight": w_q, "W_k.weight": w_k, "W_v.weight": w_v, "W_o.weight": ref.out_proj.weight.grad,
        "W_q.bias": b_q, "W_k.bias": b_k, "W_v.bias": b_v, "W_o.bias": ref.out_proj.bias.grad,
    }


@pytest.mark.points(1)
@given(case=mha_cases(), layout=st.sampled_from((None, *MHA_MASK_LAYOUTS)))
@example(case=CROSS, layout=None)
@example(case=MANY_HEADS, layout="B11S")
def test_mha_gradients(sandbox, case, layout):
    """MHA: Gradients (inputs and projections) match nn.MultiheadAttention"""
    result, params, query, key, value, mask, upstream = _forward(sandbox, case, layout, grads=True)
    _outputs(result, case)
    expected = _torch_grads(case, params, query, key, value, mask, upstream)
    why = result.get("no_grad_reason")
    param_grads = result.get("param_grads") or {}
    inputs = {"query": query, "key": key, "value": value}
    for name, want in expected.items():
        if name.startswith("grad_"):
            name = name.removeprefix("grad_")
            got = expect_gradient(result.get(f"grad_{name}"), name, inputs[name], why=why)
        else:
            got = expect_gradient(param_grads.get(name), name, want, why=why)
        expect_close(got, want, f"gradient of {name}", tol=TOL)
