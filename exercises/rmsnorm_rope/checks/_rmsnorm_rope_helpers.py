"""Judge-side helpers for the rmsnorm_rope checks: cases, references, calls.

Everything here runs in the trusted judge. The references are written from the
contract and computed in float64, then cast to the dtype the candidate must return:
torch has no RoPE, and nn.RMSNorm is forbidden only in the sandbox, but a reference
built from the formula says exactly what the README says (eps inside the square root).

The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from hypothesis import strategies as st
from torch import Tensor

from grader.judge import Tolerance, Tolerances, call, expect_returned, expect_tensor, seeds, shapes

#: float32: values O(1), at most 16 features, angles below 256 rad: a correct float32
#: implementation (frequencies and angles in float32 included) is within ~1e-5 of the
#: float64 reference. float64 must be computed in float64 throughout (the preset).
TOL = Tolerances(float32=Tolerance(atol=1e-4, rtol=1e-4))

#: Scores q_rot @ k_rotᵀ, sums of up to 16 products of O(1) values, compared between two of
#: the candidate's own float32 results at positions up to 256 apart: rounding stays ~1e-4.
SCORES_TOL = Tolerance(atol=1e-3, rtol=1e-3)

#: eps values the checks pass (None: the constructor's default, 1e-6).
EPSILONS = (None, 1e-2, 0.25)
#: x's scales: small enough that eps matters, large enough that its place shows.
SCALES = (1e-3, 0.05, 1.0, 10.0)
#: base values the checks pass (None: the default, 10000).
BASES = (None, 100.0, 10000.0, 500000.0)
MAX_POSITION = 128


# ------------------------------------------------------------------------ references


def reference_rmsnorm(x: Tensor, weight: Tensor, eps: float | None) -> Tensor:
    """x / sqrt(mean(x², -1) + eps) * weight, in float64, cast to x's dtype (differentiable)."""
    eps = 1e-6 if eps is None else eps
    x64, w64 = x.to(torch.float64), weight.to(torch.float64)
    y = x64 / torch.sqrt((x64 * x64).mean(dim=-1, keepdim=True) + eps) * w64
    return y.to(x.dtype)


def reference_rope(x: Tensor, positions: Tensor | None, base: float | None) -> Tensor:
    """x (..., seq, d) rotated pairwise (i, i + d/2) by positions[t] * base^(-2i/d), in float64."""
    base = 10000.0 if base is None else base
    seq, d = x.shape[-2], x.shape[-1]
    h = d // 2
    pos = torch.arange(seq, dtype=torch.float64) if positions is None else positions.to(torch.float64)
    theta = torch.tensor([base ** (-2.0 * i / d) for i in range(h)], dtype=torch.float64)
    angles = pos[:, None] * theta[None, :]                     # (seq, h)
    cos, sin = angles.cos(), angles.sin()
    x64 = x.to(torch.float64)
    first, second = x64[..., :h], x64[..., h:]
    out = torch.cat((first * cos - second * sin, second * cos + first * sin), dim=-1)
    return out.to(x.dtype)


# ------------------------------------------------------------------------------ cases


@dataclass(frozen=True)
class NormCase:
    lead: tuple[int, ...]
    dim: int
    eps: float | None
    scale: float
    seed: int

    def tensors(self, dtype=torch.float32) -> tuple[Tensor, Tensor, torch.Generator]:
        """weight (around 1, some negative), x (at ``scale``) and the generator, for more draws."""
        g = torch.Generator().manual_seed(self.seed)
        weight = 1.0 + 0.5 * torch.randn(self.dim, generator=g, dtype=dtype)
        x = self.scale * torch.randn(*self.lead, self.dim, generator=g, dtype=dtype)
        return weight, x, g


@st.composite
def norm_cases(draw, *, lead_dims=(1, 3), min_dim=1, scales=SCALES, epsilons=EPSILONS) -> NormCase:
    """lead_dims leading dims of 1..4 (0: a single vector), dim min_dim..16, an eps and a scale of x."""
    return NormCase(
        lead=draw(shapes(dims=lead_dims, sides=(1, 4))),
        dim=draw(st.integers(min_dim, 16)),
        eps=draw(st.sampled_from(epsilons)),
        scale=draw(st.sampled_from(scales)),
        seed=draw(seeds()),
    )


@dataclass(frozen=True)
class RopeCase:
    batch: int
    heads: int
    kv_heads: int
    seq: int
    head_dim: int
    v_dim: int
    base: float | None
    seed: int

    def tensors(self, dtype=torch.float32) -> tuple[Tensor, Tensor, Tensor, torch.Generator]:
        g = torch.Generator().manual_seed(self.seed)
        q = torch.randn(self.batch, self.heads, self.seq, self.head_dim, generator=g, dtype=dtype)
        k = torch.randn(self.batch, self.kv_heads, self.seq, self.head_dim, generator=g, dtype=dtype)
        v = torch.randn(self.batch, self.kv_heads, self.seq, self.v_dim, generator=g, dtype=dtype)
        return q, k, v, g

    def positions(self, g: torch.Generator, *, low: int = 0, high: int = MAX_POSITION) -> Tensor:
        """``seq`` int64 positions in [low, high): any order, repeats allowed (the contract allows any)."""
        return torch.randint(low, high, (self.seq,), generator=g, dtype=torch.int64)


@st.composite
def rope_cases(draw, *, min_head_dim=4, bases=(None,), same_heads=False, v_dim_is_head_dim=False,
               min_seq=1) -> RopeCase:
    """batch 1..2, heads 1..3 (kv_heads too), seq min_seq..5, even head_dim min_head_dim..16, v_dim 1..6."""
    heads = draw(st.integers(1, 3))
    head_dim = 2 * draw(st.integers(min_head_dim // 2, 8))
    return RopeCase(
        batch=draw(st.integers(1, 2)),
        heads=heads,
        kv_heads=heads if same_heads else draw(st.integers(1, 3)),
        seq=draw(st.integers(min_seq, 5)),
        head_dim=head_dim,
        v_dim=head_dim if v_dim_is_head_dim else draw(st.integers(1, 6)),
        base=draw(st.sampled_from(bases)),
        seed=draw(seeds()),
    )


# ------------------------------------------------------------------------------ calls


def rmsnorm_forward(sandbox, case: NormCase, weight: Tensor, x: Tensor, *, grad_out=None) -> dict:
    """The candidate's RMSNorm on x with ``weight``; the probe's answer, with ``out`` checked."""
    kwargs = {} if grad_out is None else {"grad_out": grad_out}
    report = call(sandbox, "rmsnorm_forward", case.dim, case.eps, weight, x, **kwargs)
    expect_tensor(report.get("out"), shape=x.shape, dtype=x.dtype, name="RMSNorm(x)")
    return report


def rope_forward(sandbox, case: RopeCase, q, k, v, positions=None, *, grads=None) -> dict:
    """The candidate's RotaryEmbedding on q, k, v (and positions); the probe's answer, a triple's report."""
    kwargs = {} if grads is None else {"grad_q": grads[0], "grad_k": grads[1]}
    args = (case.head_dim, case.base, q, k, v) + (() if positions is None else (positions,))
    report = expect_returned(call(sandbox, "rope_forward", *args, **kwargs),
                             function="RotaryEmbedding.forward", returns="a tuple (q_rot, k_rot, v)")
    return report


def rotated(report: dict, q: Tensor, k: Tensor) -> tuple[Tensor, Tensor]:
    """q_rot and k_rot from a rope_forward report, each checked for type, shape, dtype and NaN/inf."""
    q_rot = expect_tensor(report.get("q"), shape=q.shape, dtype=q.dtype, name="q_rot")
    k_rot = expect_tensor(report.get("k"), shape=k.shape, dtype=k.dtype, name="k_rot")
    return q_rot, k_rot


def describe_positions(positions: Tensor | None) -> str:
    return "default positions" if positions is None else f"positions {positions.tolist()}"
