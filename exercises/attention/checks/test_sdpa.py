"""Checks for scaled_dot_product_attention(q, k, v, mask=None) -> (out, weights)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import assume, example, given
from hypothesis import strategies as st

from _attention_helpers import (
    TOL,
    SdpaCase,
    attend,
    block_some_rows,
    broadcast_shapes,
    outputs,
    random_mask,
    reference_sdpa,
    rows_fully_blocked,
    sdpa_cases,
)
from grader.judge import expect_close, expect_gradient

# Cases every run covers first: leading dims, L != S, E != Ev (a wrong scale or
# swapped k and v cannot hide), and no leading dims at all.
CROSS = SdpaCase(lead=(2,), L=3, S=5, E=4, Ev=2, seed=1)
BATCHED = SdpaCase(lead=(2, 3), L=4, S=2, E=6, Ev=3, seed=2)
UNBATCHED = SdpaCase(lead=(), L=2, S=3, E=3, Ev=5, seed=3)


def _run(sandbox, case: SdpaCase, mask=None, *, dtype=torch.float32, grads=False):
    """Call the candidate on the case's tensors; return (result, (q, k, v), upstream grads)."""
    q, k, v, g = case.tensors(dtype)
    kwargs = {}
    if grads:
        kwargs = {
            "grad_out": torch.randn(*case.lead, case.L, case.Ev, generator=g, dtype=dtype),
            "grad_weights": torch.randn(case.scores_shape, generator=g, dtype=dtype),
        }
    args = (q, k, v) if mask is None else (q, k, v, mask)
    return attend(sandbox, "sdpa", *args, **kwargs), (q, k, v), kwargs


def _shapes(case: SdpaCase) -> dict:
    return {"out_shape": (*case.lead, case.L, case.Ev), "weights_shape": case.scores_shape}


def _check_against_reference(result, case: SdpaCase, qkv, mask=None, *, dtype=torch.float32, what: str = "") -> None:
    """out and weights (type, shape, dtype, finite) equal reference_sdpa's on the same q, k, v and mask;
    ``what`` ends each compared value's name in the message."""
    out, weights = outputs(result, **_shapes(case), dtype=dtype)
    expected_out, expected_weights = reference_sdpa(*qkv, mask)
    expect_close(weights, expected_weights, f"weights{what}", tol=TOL)
    expect_close(out, expected_out, f"out{what}", tol=TOL)


def _mask_or_none(case: SdpaCase, masked: bool):
    """A random mask over the whole (*, L, S) scores shape when ``masked``, else None (no mask argument)."""
    return random_mask(case.scores_shape, torch.Generator().manual_seed(case.seed + 1)) if masked else None


def _mask_with_blocked_rows(case: SdpaCase, data, *, row: int) -> torch.Tensor:
    """A mask in which some query rows block every key: on the explicit example (``data`` None) an
    (L, S) mask with ``row`` blocked, otherwise a drawn broadcastable shape with rows blocked at random."""
    g = torch.Generator().manual_seed(case.seed + 1)
    if data is None:
        mask = random_mask((case.L, case.S), g)
        mask[row] = False
        return mask
    shape = data.draw(broadcast_shapes(case.scores_shape), label="mask_shape")
    return block_some_rows(random_mask(shape, g), g)


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "out has one row per query and v's feature size; weights has one row per query and one "
    "column per key. Index dimensions from the end so any number of leading dims works."
)
@given(case=sdpa_cases())
@example(case=CROSS)
@example(case=BATCHED)
@example(case=UNBATCHED)
def test_sdpa_shapes(sandbox, case):
    """sdpa: Returns (out, weights) of the right shapes and dtype"""
    result, _, _ = _run(sandbox, case)
    outputs(result, **_shapes(case), dtype=torch.float32)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Scores are q·kᵀ scaled by 1/√E, where E is the feature size shared by q and k. Each "
    "query's weights must sum to 1 over the keys, and out mixes the rows of v."
)
@given(case=sdpa_cases())
@example(case=CROSS)
@example(case=BATCHED)
@example(case=UNBATCHED)
def test_sdpa_no_mask(sandbox, case):
    """sdpa: No mask: weights = softmax over keys of q·kᵀ/√E, out = weights @ v"""
    result, qkv, _ = _run(sandbox, case)
    _check_against_reference(result, case, qkv)


@pytest.mark.points(2)
@given(case=sdpa_cases(), data=st.data())
@example(case=CROSS, data=None).via("mask (L, S)")
def test_sdpa_masks(sandbox, case, data):
    """sdpa: Bool masks of any broadcastable shape (True = may attend)"""
    if data is None:
        mask_shape = (case.L, case.S)
    else:
        mask_shape = data.draw(broadcast_shapes(case.scores_shape), label="mask_shape")
    mask = random_mask(mask_shape, torch.Generator().manual_seed(case.seed + 1))
    result, qkv, _ = _run(sandbox, case, mask)
    _check_against_reference(result, case, qkv, mask, what=f" (mask of shape {tuple(mask_shape)})")


@pytest.mark.points(1)
@given(case=sdpa_cases(min_S=2), data=st.data())
@example(case=BATCHED, data=None).via("mask (L, S)")
def test_sdpa_blocked_weights_are_exactly_zero(sandbox, case, data):
    """sdpa: Blocked weights are exactly 0, not merely tiny"""
    if data is None:
        mask_shape = (case.L, case.S)
    else:
        shape = data.draw(broadcast_shapes(case.scores_shape), label="mask_shape")
        mask_shape = (*shape[:-1], case.S)
    mask = random_mask(mask_shape, torch.Generator().manual_seed(case.seed + 1), p=0.5)
    assume(not bool(mask.all()))
    result, _, _ = _run(sandbox, case, mask)
    _, weights = outputs(result, **_shapes(case), dtype=torch.float32)
    blocked = ~mask.expand(case.scores_shape)
    leaked = weights[blocked]
    if bool((leaked != 0).any()):
        raise AssertionError(
            f"weights at blocked positions must be exactly 0; {int((leaked != 0).sum())} of "
            f"{leaked.numel()} are not (largest {leaked.abs().max().item():.3g})"
        )


@pytest.mark.points(2)
@given(case=sdpa_cases(), data=st.data())
@example(case=CROSS, data=None).via("one fully blocked row")
def test_sdpa_fully_blocked_rows(sandbox, case, data):
    """sdpa: Fully blocked rows: zero weights, zero output, no NaN"""
    mask = _mask_with_blocked_rows(case, data, row=0)
    result, qkv, _ = _run(sandbox, case, mask)
    out, weights = outputs(result, **_shapes(case), dtype=torch.float32)  # no NaN/inf
    dead = rows_fully_blocked(mask, case.scores_shape)
    if bool((weights[dead] != 0).any()):
        raise AssertionError("weights of a query row whose keys are all blocked must all be 0")
    if bool((out[dead] != 0).any()):
        raise AssertionError("out of a query row whose keys are all blocked must be all 0")
    _check_against_reference(result, case, qkv, mask, what=" of the other rows")


@pytest.mark.points(1)
@given(case=sdpa_cases(), masked=st.booleans())
@example(case=CROSS, masked=True)
def test_sdpa_float64(sandbox, case, masked):
    """sdpa: float64 in, float64 out, at float64 precision"""
    mask = _mask_or_none(case, masked)
    result, qkv, _ = _run(sandbox, case, mask, dtype=torch.float64)
    _check_against_reference(result, case, qkv, mask, dtype=torch.float64, what=" (float64)")


def _expected_grads(q, k, v, mask, grad_out, grad_weights):
    q, k, v = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
    out, weights = reference_sdpa(q, k, v, mask)
    loss = (out * grad_out).sum() + (weights * grad_weights).sum()
    return dict(zip(("grad_q", "grad_k", "grad_v"), torch.autograd.grad(loss, (q, k, v))))


def _check_grads(result, inputs, mask, upstream):
    expected = _expected_grads(*inputs, mask, upstream["grad_out"], upstream["grad_weights"])
    why = result.get("no_grad_reason")
    for (key, want), like in zip(expected.items(), inputs):
        name = key.removeprefix("grad_")
        expect_close(expect_gradient(result.get(key), name, like, why=why), want, f"gradient of {name}", tol=TOL)


@pytest.mark.points(2)
@given(case=sdpa_cases(), masked=st.booleans())
@example(case=CROSS, masked=False)
@example(case=BATCHED, masked=True)
def test_sdpa_gradients(sandbox, case, masked):
    """sdpa: Gradients in q, k and v match a reference

    Through both outputs: a random upstream gradient on out and on weights.
    """
    mask = _mask_or_none(case, masked)
    result, inputs, upstream = _run(sandbox, case, mask, grads=True)
    outputs(result, **_shapes(case), dtype=torch.float32)
    _check_grads(result, inputs, mask, upstream)


@pytest.mark.points(1)
@given(case=sdpa_cases(), data=st.data())
@example(case=CROSS, data=None).via("one fully blocked row")
def test_sdpa_gradients_with_fully_blocked_rows(sandbox, case, data):
    """sdpa: Gradients stay finite and right with fully blocked rows"""
    mask = _mask_with_blocked_rows(case, data, row=-1)
    result, inputs, upstream = _run(sandbox, case, mask, grads=True)
    outputs(result, **_shapes(case), dtype=torch.float32)
    _check_grads(result, inputs, mask, upstream)
