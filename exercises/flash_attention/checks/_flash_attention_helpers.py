"""The judge's own attention, tolerances and memory budget for the flash_attention checks.

The truth is attention computed the plain way in float64 on the CPU (the judge's inputs are
small enough for a full score matrix), from the same rounded inputs the candidate got.
"""

from __future__ import annotations

import math

import torch

from grader.judge import Tolerance, expect_bounded, expect_close, expect_tensor

#: By the dtype of q: float32 accumulates to ~1e-6; half precisions round the output itself
#: (2^-11 and 2^-8 relative), and a candidate may round the probabilities to it before p @ v.
TOLERANCE = {
    torch.float32: Tolerance(atol=1e-4, rtol=1e-4),
    torch.float16: Tolerance(atol=2e-3, rtol=2e-3),
    torch.bfloat16: Tolerance(atol=1.6e-2, rtol=1.6e-2),
}
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}

MIB = 2**20
#: What the budget allows beyond the terms of the formula: cuBLAS's workspace for a stream the probe
#: did not warm up (the caching allocator counts it), and the allocator's rounding.
SLACK = 64 * MIB


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool,
              positions: torch.Tensor | None = None) -> torch.Tensor:
    """softmax(q kᵀ / √D, masked) v in float64; causal: query i sees keys j <= i (top-left aligned).
    ``positions``: the indices of q's rows in the whole query sequence, when q holds only some of its rows."""
    q, k, v = q.double(), k.double(), v.double()
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        rows = torch.arange(q.shape[-2]) if positions is None else positions
        scores = scores.masked_fill(torch.arange(k.shape[-2]).view(1, -1) > rows.view(-1, 1), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def expect_attention(got, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool, name: str,
                     positions: torch.Tensor | None = None) -> None:
    """``got`` is attention(q, k, v) in q's dtype and shape, within the tolerance for that dtype."""
    want = attention(q, k, v, causal=causal, positions=positions)
    out = expect_tensor(got, shape=tuple(want.shape), dtype=q.dtype, name=name)
    tol = TOLERANCE[q.dtype]
    expect_close(out.double(), want, name, atol=tol.atol, rtol=tol.rtol,
                 note=f"compared with softmax(q kᵀ / √D{', causal' if causal else ''}) v computed in float64 "
                      f"(atol {tol.atol:g}, rtol {tol.rtol:g} for {str(q.dtype).removeprefix('torch.')})")


def budget(b: int, h: int, lq: int, lk: int, d: int, dtype: torch.dtype, block_size: int, *,
           slack: int = SLACK) -> int:
    """What one call may allocate on the GPU beyond q, k and v, in bytes (the README's Decisions, "Memory"):
    4 x (q + output) + 2 x (k + v) + 8 score tiles of (B, H, Lq, block_size) in float32, + slack."""
    size = torch.empty((), dtype=dtype).element_size()
    q_and_out = 2 * b * h * lq * d * size
    k_and_v = 2 * b * h * lk * d * size
    tiles = 8 * b * h * lq * block_size * 4
    return 4 * q_and_out + 2 * k_and_v + tiles + slack


def expect_within_budget(got: dict, *, shape: tuple[int, int, int, int, int], dtype: torch.dtype, block_size: int,
                         what: str) -> None:
    """The probe's measure (``peak``: bytes above what was allocated before the call) within :func:`budget`."""
    if got.get("peak_reset"):
        raise AssertionError(f"{what}: the allocator's peak statistic was reset during your call (the sentinel the "
                             "probe left in it is gone): the memory it measures cannot be trusted, so no credit")
    b, h, lq, lk, d = shape
    allowed = budget(b, h, lq, lk, d, dtype, block_size)
    scores = b * h * lq * lk * 4
    expect_bounded(got["peak"], name=f"{what}: GPU memory your call allocated at its peak, in bytes", at_most=allowed,
                   types=(int,), allow_tensor=False,
                   note=f"the budget for B={b}, H={h}, Lq={lq}, Lk={lk}, D={d}, block_size={block_size} is "
                        f"{allowed / MIB:.0f} MiB (README, Decisions, \"Memory\"); one float32 (Lq, Lk) score matrix "
                        f"for every head is {scores / MIB:.0f} MiB. Process the keys in blocks and keep only running "
                        "sums per query.")
