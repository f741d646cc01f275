"""Judge-side helpers for the attention checks: strategies, references, calls.

Everything here runs in the trusted judge. References are built from PyTorch's
own implementations (torch.softmax, F.scaled_dot_product_attention,
nn.MultiheadAttention), patched only where the contract says more than they do:
a query row whose keys are all blocked gets zero weights and a zero output.

The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from hypothesis import strategies as st
from torch import Tensor, nn

from grader.judge import Tolerance, Tolerances, call, expect_returned, expect_tensor, seeds, shapes

PROJECTIONS = ("W_q", "W_k", "W_v", "W_o")

#: float32: values O(1), at most 8 keys and 16 features, a softmax in between: rounding
#: error is ~1e-6, kept well inside 1e-4. float64 must be computed in float64 (the preset).
TOL = Tolerances(float32=Tolerance(atol=1e-4, rtol=1e-4))

# The mask layouts the MultiHeadAttention contract names: (L, S), or 4-D
# broadcastable to (B, n_heads, L, S).
MHA_MASK_LAYOUTS = ("LS", "B11S", "B1LS", "BHLS", "1HLS", "11LS", "BH1S")


# --------------------------------------------------------------------------- calls


#: The candidate's function each probe calls, for "it returned X" messages.
_FUNCTIONS = {"sdpa": "scaled_dot_product_attention", "mha_forward": "MultiHeadAttention.forward"}


def attend(sandbox, probe: str, *args, **kwargs) -> dict:
    """``call``, then: the candidate's function returned a pair (out, weights).

    (Forbidden APIs are absent from the sandbox: using one raises there.)
    """
    return expect_returned(call(sandbox, probe, *args, **kwargs), function=_FUNCTIONS[probe],
                           returns="a tuple (out, weights)")


def outputs(result: dict, *, out_shape, weights_shape, dtype) -> tuple[Tensor, Tensor]:
    """out and weights from a probe result, each checked for type, shape, dtype and NaN/inf."""
    out = expect_tensor(result["out"], shape=tuple(out_shape), dtype=dtype, name="out")
    weights = expect_tensor(
        result["weights"], shape=tuple(weights_shape), dtype=dtype, name="weights"
    )
    return out, weights


# ---------------------------------------------------------------------- strategies


@dataclass(frozen=True)
class SdpaCase:
    lead: tuple[int, ...]
    L: int
    S: int
    E: int
    Ev: int
    seed: int

    @property
    def scores_shape(self) -> tuple[int, ...]:
        return (*self.lead, self.L, self.S)

    def tensors(self, dtype=torch.float32) -> tuple[Tensor, Tensor, Tensor, torch.Generator]:
        """q, k, v (key differs from value) and the generator, for more draws."""
        g = torch.Generator().manual_seed(self.seed)
        q = torch.randn(*self.lead, self.L, self.E, generator=g, dtype=dtype)
        k = torch.randn(*self.lead, self.S, self.E, generator=g, dtype=dtype)
        v = torch.randn(*self.lead, self.S, self.Ev, generator=g, dtype=dtype)
        return q, k, v, g


@st.composite
def sdpa_cases(draw, *, min_S: int = 1, max_lead: int = 2) -> SdpaCase:
    """Shapes for scaled_dot_product_attention: 0..max_lead leading dims, L != S allowed."""
    return SdpaCase(
        lead=draw(shapes(dims=(0, max_lead), sides=(1, 3))),
        L=draw(st.integers(1, 6)),
        S=draw(st.integers(min_S, 6)),
        E=draw(st.integers(1, 8)),
        Ev=draw(st.integers(1, 8)),
        seed=draw(seeds()),
    )


@st.composite
def broadcast_shapes(draw, target: tuple[int, ...]) -> tuple[int, ...]:
    """A shape broadcastable to target: trailing dims, each full size or 1."""
    ndim = draw(st.integers(1, len(target)))
    return tuple(draw(st.sampled_from([n, 1])) for n in target[len(target) - ndim :])


def random_mask(shape, g: torch.Generator, *, p: float = 0.6) -> Tensor:
    """A bool mask in which every row (last dim) lets at least one key through."""
    mask = torch.rand(shape, generator=g) < p
    if mask.numel():
        pick = torch.randint(0, shape[-1], (*shape[:-1], 1), generator=g)
        mask.scatter_(-1, pick, True)
    return mask


def block_some_rows(mask: Tensor, g: torch.Generator) -> Tensor:
    """A copy of mask with at least one row (over its own shape) fully blocked."""
    mask = mask.clone()
    rows = mask.view(-1, mask.shape[-1])
    chosen = torch.rand(rows.shape[0], generator=g) < 0.35
    chosen[torch.randint(0, rows.shape[0], (1,), generator=g)] = True
    rows[chosen] = False
    return mask


def mha_mask_shape(layout: str, B: int, H: int, L: int, S: int) -> tuple[int, ...]:
    sizes = {"B": B, "H": H, "L": L, "S": S, "1": 1}
    return tuple(sizes[c] for c in layout)


@dataclass(frozen=True)
class MhaCase:
    B: int
    L: int
    S: int
    n_heads: int
    d_head: int
    seed: int

    @property
    def d_model(self) -> int:
        return self.n_heads * self.d_head

    def tensors(self) -> tuple[dict[str, Tensor], Tensor, Tensor, Tensor, torch.Generator]:
        """Projection parameters (bias included), query, key, value (key != value)."""
        g = torch.Generator().manual_seed(self.seed)
        d = self.d_model
        params = {}
        for name in PROJECTIONS:
            params[f"{name}.weight"] = torch.randn(d, d, generator=g) / math.sqrt(d)
            params[f"{name}.bias"] = 0.5 * torch.randn(d, generator=g)
        query = torch.randn(self.B, self.L, d, generator=g)
        key = torch.randn(self.B, self.S, d, generator=g)
        value = torch.randn(self.B, self.S, d, generator=g)
        return params, query, key, value, g


@st.composite
def mha_cases(draw, *, min_heads: int = 1) -> MhaCase:
    return MhaCase(
        B=draw(st.integers(1, 3)),
        L=draw(st.integers(1, 5)),
        S=draw(st.integers(1, 5)),
        n_heads=draw(st.integers(min_heads, 4)),
        d_head=draw(st.integers(1, 4)),
        seed=draw(seeds()),
    )


# ---------------------------------------------------------------------- references


def reference_sdpa(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None):
    """(out, weights) as the contract defines them, differentiable.

    out comes from F.scaled_dot_product_attention (PyTorch's own) and weights from
    torch.softmax, both on a mask whose fully blocked rows are opened (so nothing
    is NaN, forward or backward); those rows are then set to exactly zero.
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v), torch.softmax(scores, dim=-1)
    mask = mask.expand(scores.shape)
    live = mask.any(dim=-1, keepdim=True)
    opened = mask | ~live
    weights = torch.softmax(scores.masked_fill(~opened, float("-inf")), dim=-1)
    weights = torch.where(mask, weights, torch.zeros((), dtype=weights.dtype))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=opened)
    out = torch.where(live, out, torch.zeros((), dtype=out.dtype))
    return out, weights


def torch_mha(d_model: int, n_heads: int, params: dict[str, Tensor], bias: bool = True):
    """nn.MultiheadAttention holding the same weights as the candidate's projections."""
    ref = nn.MultiheadAttention(d_model, n_heads, bias=bias, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([params[f"{n}.weight"] for n in ("W_q", "W_k", "W_v")]))
        ref.out_proj.weight.copy_(params["W_o.weight"])
        if bias:
            ref.in_proj_bias.copy_(torch.cat([params[f"{n}.bias"] for n in ("W_q", "W_k", "W_v")]))
            ref.out_proj.bias.copy_(params["W_o.bias"])
    return ref


def expected_mha(case: MhaCase, params, query, key, value, mask=None, *, bias=True):
    """(out, weights) the contract asks of MultiHeadAttention.

    Computed by nn.MultiheadAttention(batch_first=True, attn_mask=~mask,
    average_attn_weights=False). Where that gives NaN (rows with all keys blocked,
    in some head), weights are 0 and out is W_o applied to the heads, a fully
    blocked head contributing zeros, as the contract defines.
    """
    B, L, S, H = case.B, case.L, case.S, case.n_heads
    full = None if mask is None else mask.expand(B, H, L, S)
    ref = torch_mha(case.d_model, H, params, bias)
    attn_mask = None if full is None else (~full).reshape(B * H, L, S)
    out, weights = ref(query, key, value, attn_mask=attn_mask, need_weights=True,
                       average_attn_weights=False)
    if full is None:
        return out, weights
    live = full.any(dim=-1, keepdim=True)  # (B, H, L, 1)
    weights = torch.where(live, weights, torch.zeros(()))
    # Rows where some head is fully blocked: nn.MultiheadAttention gives NaN there.
    heads_out = _heads_formula(case, params, query, key, value, full, bias=bias)
    row_ok = live.all(dim=1)  # (B, L, 1)
    out = torch.where(row_ok, out, heads_out)
    return out, weights


def _heads_formula(case: MhaCase, params, query, key, value, full_mask, *, bias=True):
    """W_o(concat_h sdpa(Q_h, K_h, V_h)) with the contract's zero rows."""
    B, L, S, H, dh = case.B, case.L, case.S, case.n_heads, case.d_head

    def proj(name, x):
        return F.linear(x, params[f"{name}.weight"], params[f"{name}.bias"] if bias else None)

    def split(x):
        return x.view(B, x.shape[1], H, dh).transpose(1, 2)

    heads, _ = reference_sdpa(
        split(proj("W_q", query)), split(proj("W_k", key)), split(proj("W_v", value)), full_mask
    )
    return proj("W_o", heads.transpose(1, 2).reshape(B, L, H * dh))


def rows_fully_blocked(mask: Tensor, shape) -> Tensor:
    """Bool (..., L) over the broadcast shape: True where a query row has no key."""
    return ~mask.expand(shape).any(dim=-1)
