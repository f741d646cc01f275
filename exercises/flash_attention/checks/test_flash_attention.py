"""Checks for attention_forward(q, k, v, *, causal=False, block_size=128) on the GPU.

The numbers are held to attention computed the plain way in float64 (``_flash_attention_helpers``);
the memory to a budget linear in the sequence lengths, measured by the probe with the CUDA caching
allocator's peak statistic around the call. Every check needs the GPU (the exercise's gpu policy is
"required": without one the grading is not graded, never scored).
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _flash_attention_helpers import DTYPES, expect_attention, expect_within_budget
from grader.judge import expect_equal
from shared import values

pytestmark = pytest.mark.gpu


@st.composite
def cases(draw):
    """Small shapes (the judge computes the full score matrix), block sizes that split the keys unevenly."""
    return dict(b=draw(st.integers(1, 2)), h=draw(st.integers(1, 3)), lq=draw(st.integers(1, 70)),
                lk=draw(st.integers(1, 70)), d=draw(st.sampled_from([1, 4, 16, 64])),
                block_size=draw(st.integers(1, 32)), spread=draw(st.floats(0.1, 4.0)), seed=draw(st.integers(0, 2**16)))


def _inputs(case: dict, dtype: torch.dtype = torch.float32):
    g = torch.Generator().manual_seed(case["seed"])
    b, h, lq, lk, d = (case[k] for k in ("b", "h", "lq", "lk", "d"))
    q = (torch.randn(b, h, lq, d, generator=g) * case["spread"]).to(dtype)
    return q, torch.randn(b, h, lk, d, generator=g).to(dtype), torch.randn(b, h, lk, d, generator=g).to(dtype)


def _run(sandbox, q, k, v, *, causal: bool, block_size: int) -> dict:
    return sandbox.call("forward", q, k, v, causal, block_size)


def _describe(case: dict, causal: bool) -> str:
    return (f"attention_forward(q {(case['b'], case['h'], case['lq'], case['d'])}, k and v with Lk={case['lk']}, "
            f"causal={causal}, block_size={case['block_size']})")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Keep a running max m, a running sum l and an accumulator per query; when a block raises m, "
                  "rescale l and the accumulator by exp(m_old - m_new) before adding the block.")
@given(case=cases())
@example(case=dict(b=1, h=1, lq=5, lk=40, d=4, block_size=8, spread=3.0, seed=1))
def test_matches_attention(sandbox, case):
    """Without a mask, the output is softmax(q kᵀ / √D) v for any block size"""
    q, k, v = _inputs(case)
    got = _run(sandbox, q, k, v, causal=False, block_size=case["block_size"])
    expect_attention(got["out"], q, k, v, causal=False, name=_describe(case, False))


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Query i may attend keys 0..i (top-left aligned, as torch's is_causal); a block whose keys are all "
                  "after a query contributes nothing to that query, and never a NaN.")
@given(case=cases())
@example(case=dict(b=1, h=2, lq=40, lk=40, d=4, block_size=8, spread=2.0, seed=2))
@example(case=dict(b=1, h=1, lq=20, lk=45, d=16, block_size=16, spread=1.0, seed=3))
def test_causal_matches_masked_attention(sandbox, case):
    """With causal=True, query i attends keys 0..i only (top-left aligned), for any lengths and block size"""
    q, k, v = _inputs(case)
    got = _run(sandbox, q, k, v, causal=True, block_size=case["block_size"])
    expect_attention(got["out"], q, k, v, causal=True, name=_describe(case, True))


@pytest.mark.points(2)
@pytest.mark.parametrize("direction", ["rising", "falling"])
def test_scores_that_peak_in_a_later_block(sandbox, direction):
    """Scores that rise (or fall) from block to block: the running sums are rescaled when the maximum moves"""
    lq, lk, d, block = 6, 64, 8, 16
    u = torch.ones(d) / d**0.5
    ramp = torch.linspace(0, 12, lk) if direction == "rising" else torch.linspace(12, 0, lk)
    k = (ramp.view(lk, 1) * u).expand(1, 1, lk, d).contiguous()
    q = (torch.linspace(0.5, 1.5, lq).view(lq, 1) * u * d**0.5).expand(1, 1, lq, d).contiguous()
    v = torch.randn(1, 1, lk, d, generator=torch.Generator().manual_seed(7))
    got = _run(sandbox, q, k, v, causal=False, block_size=block)
    expect_attention(got["out"], q, k, v, causal=False,
                     name=f"scores {direction} across 4 key blocks of {block} (largest {direction} by 12 per row)")


@pytest.mark.points(1)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("causal", [False, True])
def test_half_precision_inputs(sandbox, dtype, causal):
    """float16 and bfloat16 inputs: the output in the same dtype, accurate to that dtype"""
    case = dict(b=2, h=2, lq=48, lk=80, d=32, block_size=16, spread=2.0, seed=11)
    q, k, v = _inputs(case, DTYPES[dtype])
    got = _run(sandbox, q, k, v, causal=causal, block_size=case["block_size"])
    expect_attention(got["out"], q, k, v, causal=causal, name=f"{_describe(case, causal)} in {dtype}")


@pytest.mark.points(1)
@pytest.mark.parametrize("lq, lk, block_size, causal", [
    (1, 300, 128, False),  # one query (a decoding step), a last block of 44 keys
    (7, 1, 128, False),  # one key, a block far larger than the keys
    (33, 33, 1, True),  # one key per block
    (50, 17, 64, True),  # more queries than keys: the last rows see every key
    (3, 40, 8, True),  # fewer queries than keys: most blocks are after every query
])
def test_edge_lengths_and_block_sizes(sandbox, lq, lk, block_size, causal):
    """One query, one key, one key per block, blocks larger than the keys, Lq above and below Lk"""
    case = dict(b=1, h=2, lq=lq, lk=lk, d=8, block_size=block_size, spread=2.0, seed=lq * 1000 + lk)
    q, k, v = _inputs(case)
    got = _run(sandbox, q, k, v, causal=causal, block_size=block_size)
    expect_attention(got["out"], q, k, v, causal=causal, name=_describe(case, causal))


@pytest.mark.points(1)
def test_output_on_the_inputs_device_and_inputs_unchanged(sandbox):
    """The output is on q's device (the GPU), and q, k and v are left as they were"""
    case = dict(b=1, h=2, lq=24, lk=24, d=16, block_size=8, spread=2.0, seed=5)
    q, k, v = _inputs(case)
    got = _run(sandbox, q, k, v, causal=True, block_size=case["block_size"])
    expect_equal(got["device"], "cuda", name="the device of the output",
                 note="return the output on the device q is on; the checks read it back themselves")
    expect_equal(got["unchanged"], [True, True, True], name="[q, k, v] unchanged after the call",
                 note="scale a copy of q (or the scores), never the caller's tensors in place")


#: The memory checks' shapes: (B, H, Lq, Lk, D), dtype, causal, block_size. A float32 score matrix
#: for every head is 1 GiB for the first two and 512 MiB for the third; their budgets are 288, 240
#: and 105 MiB.
LARGE = {
    "equal lengths": ((1, 4, 8192, 8192, 64), "float32", False, 128),
    "equal lengths, causal, float16": ((1, 4, 8192, 8192, 64), "float16", True, 128),
    "many more keys than queries": ((1, 2, 1024, 65536, 16), "float32", False, 128),
}


def _large(sandbox, label: str):
    shape, dtype, causal, block_size = LARGE[label]
    b, h, lq, lk, d = shape
    rows = sorted({0, 1, lq // 3, lq // 2, lq - 2, lq - 1})
    got = sandbox.call("peak_memory", 3, list(shape), dtype, causal, block_size, rows)
    what = f"{label}: B={b}, H={h}, Lq={lq}, Lk={lk}, D={d}, {dtype}, causal={causal}, block_size={block_size}"
    return got, rows, what


def _expect_rows(got, label: str, rows: list[int], what: str) -> None:
    (b, h, lq, lk, d), dtype, causal, _ = LARGE[label]
    index = torch.tensor(rows)
    q = values(3, 0, (b, h, lq, d), DTYPES[dtype], rows=index)
    k, v = values(3, 1, (b, h, lk, d), DTYPES[dtype]), values(3, 2, (b, h, lk, d), DTYPES[dtype])
    expect_attention(got["rows"], q, k, v, causal=causal, positions=index, name=f"{what}: output rows {rows}")


@pytest.mark.points(2)
@pytest.mark.parametrize("label", ["equal lengths", "equal lengths, causal, float16"])
def test_memory_grows_linearly_with_the_sequence(sandbox, label):
    """At 8192 queries and keys, the call stays within the memory budget (no (Lq, Lk) tensor), and is right"""
    got, rows, what = _large(sandbox, label)
    (b, h, lq, lk, d), dtype, _, block_size = LARGE[label]
    expect_within_budget(got, shape=(b, h, lq, lk, d), dtype=DTYPES[dtype], block_size=block_size, what=what)
    _expect_rows(got, label, rows, what)


@pytest.mark.points(2)
def test_memory_with_many_more_keys_than_queries(sandbox):
    """At 65536 keys for 1024 queries, the call stays within the memory budget: scores for one key block at a time"""
    label = "many more keys than queries"
    got, rows, what = _large(sandbox, label)
    (b, h, lq, lk, d), dtype, _, block_size = LARGE[label]
    expect_within_budget(got, shape=(b, h, lq, lk, d), dtype=DTYPES[dtype], block_size=block_size, what=what)
    _expect_rows(got, label, rows, what)
