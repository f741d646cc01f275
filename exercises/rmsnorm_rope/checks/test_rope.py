"""Checks for RotaryEmbedding(head_dim, base=10000.0), and for inputs left unchanged by both modules."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _rmsnorm_rope_helpers import (
    BASES,
    MAX_POSITION,
    SCORES_TOL,
    TOL,
    NormCase,
    RopeCase,
    describe_positions,
    reference_rope,
    rmsnorm_forward,
    rope_cases,
    rope_forward,
    rotated,
)
from grader.judge import EXACT, call, candidate_raises, expect_close, expect_gradient, expect_tensor

# Cases every run covers first: heads != kv_heads and v_dim != head_dim; the smallest size where
# the pairing convention shows; a long head with a custom base.
GQA = RopeCase(batch=2, heads=3, kv_heads=1, seq=4, head_dim=8, v_dim=3, base=None, seed=1)
SMALL = RopeCase(batch=1, heads=1, kv_heads=1, seq=3, head_dim=4, v_dim=4, base=None, seed=2)
LONG = RopeCase(batch=1, heads=2, kv_heads=2, seq=5, head_dim=16, v_dim=2, base=500000.0, seed=3)


def _expect_rotated(report: dict, case: RopeCase, q, k, positions, what: str = "") -> None:
    """q_rot and k_rot (type, shape, dtype, finite) equal the reference rotation of q and k."""
    q_rot, k_rot = rotated(report, q, k)
    where = f" (head_dim={case.head_dim}, base={case.base or 10000.0}, {describe_positions(positions)}{what})"
    expect_close(q_rot, reference_rope(q, positions, case.base), f"q_rot{where}", tol=TOL)
    expect_close(k_rot, reference_rope(k, positions, case.base), f"k_rot{where}", tol=TOL)


@pytest.mark.points(1)
@given(head_dim=st.integers(0, 32).map(lambda n: 2 * n + 1), base=st.sampled_from([None, 100.0]))
@example(head_dim=5, base=None)
@example(head_dim=1, base=None)
def test_rope_rejects_odd_head_dim(sandbox, head_dim, base):
    """RotaryEmbedding: an odd head_dim raises ValueError naming the size"""
    with candidate_raises("ValueError", match=rf"(?<![0-9]){head_dim}(?![0-9])",
                          what=f"RotaryEmbedding({head_dim})"):
        call(sandbox, "rope_build", head_dim, base)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Pair feature i with feature i + head_dim/2 (rotate half, not interleaved pairs), turn the pair "
                  "by p * base**(-2i/head_dim) at position p (positions 0, 1, ... by default), and use "
                  "x*cos - y*sin for the first of the pair, y*cos + x*sin for the second.")
@given(case=rope_cases())
@example(case=SMALL)
@example(case=GQA)
def test_rope_rotates_q_and_k(sandbox, case):
    """RotaryEmbedding: q and k rotated by position, pairs (i, i + d/2), θᵢ = base^(-2i/d) (float32)"""
    q, k, v, _ = case.tensors()
    report = rope_forward(sandbox, case, q, k, v)
    _expect_rotated(report, case, q, k, None)


@pytest.mark.points(2)
@given(case=rope_cases(bases=BASES), start=st.integers(0, MAX_POSITION - 1), data=st.data())
@example(case=GQA, start=7, data=None).via("decoding: consecutive positions from 7")
@example(case=LONG, start=0, data=None).via("base 500000")
def test_rope_positions(sandbox, case, start, data):
    """RotaryEmbedding: explicit positions (a KV-cache offset, any order) and a custom base"""
    q, k, v, g = case.tensors()
    if data is None or data.draw(st.booleans(), label="consecutive"):
        positions = torch.arange(start, start + case.seq)
    else:
        positions = case.positions(g)
    report = rope_forward(sandbox, case, q, k, v, positions)
    _expect_rotated(report, case, q, k, positions)


@pytest.mark.points(1)
@given(case=rope_cases(bases=BASES), explicit=st.booleans())
@example(case=LONG, explicit=True)
def test_rope_float64(sandbox, case, explicit):
    """RotaryEmbedding: float64 in, float64 out, at float64 precision (frequencies included)"""
    q, k, v, g = case.tensors(torch.float64)
    positions = case.positions(g, low=MAX_POSITION // 2) if explicit else None
    report = rope_forward(sandbox, case, q, k, v, positions)
    _expect_rotated(report, case, q, k, positions, ", float64")


@pytest.mark.points(2)
@given(case=rope_cases(min_head_dim=2, same_heads=True, bases=BASES, min_seq=2),
       shift=st.integers(1, MAX_POSITION), default=st.booleans())
@example(case=SMALL, shift=5, default=True)
def test_rope_scores_depend_only_on_relative_position(sandbox, case, shift, default):
    """RotaryEmbedding: scores q_rot·k_rot depend only on the offset between positions

    Shifting every position by the same amount leaves q_rot @ k_rotᵀ unchanged.
    """
    q, k, v, g = case.tensors()
    positions = None if default else case.positions(g)
    first = rope_forward(sandbox, case, q, k, v, positions)
    shifted = (torch.arange(case.seq) if positions is None else positions) + shift
    second = rope_forward(sandbox, case, q, k, v, shifted)
    q1, k1 = rotated(first, q, k)
    q2, k2 = rotated(second, q, k)
    expect_close(q2 @ k2.transpose(-1, -2), q1 @ k1.transpose(-1, -2),
                 f"scores q_rot @ k_rotᵀ at {describe_positions(shifted)}, against those at "
                 f"{describe_positions(positions)}", tol=SCORES_TOL,
                 note="A rotation by angles proportional to the position makes each score depend on "
                      "the offset between the two positions only.")


@pytest.mark.points(1)
@given(case=rope_cases(v_dim_is_head_dim=True, bases=BASES), dtype=st.sampled_from([torch.float32, torch.float64]))
@example(case=SMALL, dtype=torch.float32)
def test_rope_leaves_v_alone(sandbox, case, dtype):
    """RotaryEmbedding: v is returned unchanged; only q and k are rotated"""
    q, k, v, g = case.tensors(dtype)
    positions = case.positions(g, low=1)
    report = rope_forward(sandbox, case, q, k, v, positions)
    got = expect_tensor(report.get("v"), shape=v.shape, dtype=dtype, name="the returned v")
    expect_close(got, v, f"the returned v ({describe_positions(positions)})", tol=EXACT,
                 note="Position goes into the scores through q and k; v is what gets averaged and stays as is.")


@pytest.mark.points(1)
@given(case=rope_cases(bases=BASES), dtype=st.sampled_from([torch.float32, torch.float64]), explicit=st.booleans())
@example(case=GQA, dtype=torch.float32, explicit=True)
def test_rope_gradients(sandbox, case, dtype, explicit):
    """RotaryEmbedding: gradients in q and k match a reference

    With a random upstream gradient on q_rot and on k_rot.
    """
    q, k, v, g = case.tensors(dtype)
    positions = case.positions(g) if explicit else None
    upstream = (torch.randn(q.shape, generator=g, dtype=dtype), torch.randn(k.shape, generator=g, dtype=dtype))
    report = rope_forward(sandbox, case, q, k, v, positions, grads=upstream)
    rotated(report, q, k)
    qr, kr = q.clone().requires_grad_(True), k.clone().requires_grad_(True)
    loss = (reference_rope(qr, positions, case.base) * upstream[0]).sum() + \
        (reference_rope(kr, positions, case.base) * upstream[1]).sum()
    want_q, want_k = torch.autograd.grad(loss, (qr, kr))
    why = report.get("no_grad_reason")
    expect_close(expect_gradient(report.get("grad_q"), "q", q, why=why), want_q, "gradient of q", tol=TOL)
    expect_close(expect_gradient(report.get("grad_k"), "k", k, why=why), want_k, "gradient of k", tol=TOL)


@pytest.mark.points(1)
@given(case=rope_cases(bases=BASES), dim=st.integers(1, 16), dtype=st.sampled_from([torch.float32, torch.float64]))
@example(case=GQA, dim=4, dtype=torch.float32)
def test_inputs_left_unchanged(sandbox, case, dim, dtype):
    """Both modules: x, q, k and v keep their values (nothing changed in place)"""
    norm_case = NormCase(lead=(2, 3), dim=dim, eps=None, scale=1.0, seed=case.seed)
    weight, x, _ = norm_case.tensors(dtype)
    report = rmsnorm_forward(sandbox, norm_case, weight, x.clone())
    after = expect_tensor(report.get("x_after"), shape=x.shape, dtype=dtype, name="x after RMSNorm(x)")
    expect_close(after, x, "x after RMSNorm(x)", tol=EXACT, note="RMSNorm must not change its input.")
    q, k, v, g = case.tensors(dtype)
    positions = case.positions(g, low=1)
    report = rope_forward(sandbox, case, q.clone(), k.clone(), v.clone(), positions)
    for name, original in (("q", q), ("k", k), ("v", v)):
        got = expect_tensor(report.get(f"{name}_after"), shape=original.shape, dtype=dtype,
                            name=f"{name} after rope(q, k, v)")
        expect_close(got, original, f"{name} after rope(q, k, v)", tol=EXACT,
                     note="RotaryEmbedding must return new tensors and leave its inputs as they were.")
