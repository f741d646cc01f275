"""Judge-side helpers for the int8_linear checks: weights, the judge's own quantisation, comparisons.

The judge quantises every weight itself (float64 arithmetic on the float32 weight), and
judges the candidate's buffers by what the contract allows: the scale within 1e-6 of
max|W|/127, each int8 value the nearest integer (either neighbour within 1e-4 of a tie),
forward within a bound scaled by the magnitudes summed.
"""

from __future__ import annotations

import torch

from grader.judge import Opaque, expect_bounded, expect_close, expect_tensor

#: Half-width of the band around k + 0.5 where either neighbour is accepted.
TIE = 1e-4


def weight(seed: int, out_features: int, in_features: int, *, zero_rows=(), single=(), negative_max=(),
           low: float = -3.0, high: float = 2.0) -> torch.Tensor:
    """A float32 weight whose rows have magnitudes 10**U(low, high); rows in ``zero_rows`` all zero, rows in
    ``single`` one non-zero entry, rows in ``negative_max`` their largest magnitude negative."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(out_features, in_features, generator=g)
    mags = 10 ** (torch.rand(out_features, 1, generator=g) * (high - low) + low)
    w = w * mags
    for i in single:
        keep = int(torch.randint(in_features, (1,), generator=g))
        row = torch.zeros(in_features)
        row[keep] = w[i, keep]
        w[i] = row
    for i in negative_max:
        j = int(w[i].abs().argmax())
        w[i, j] = -w[i, j].abs()
    for i in zero_rows:
        w[i] = 0.0
    return w.to(torch.float32)


def bias(seed: int, out_features: int) -> torch.Tensor:
    return torch.randn(out_features, generator=torch.Generator().manual_seed(seed + 1000))


def inputs(seed: int, in_features: int, shapes: list) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed + 2000)
    return [torch.randn(*lead, in_features, generator=g) for lead in shapes]


def judge_scale(w: torch.Tensor) -> torch.Tensor:
    """max|W[i, :]| / 127 in float32; 1.0 for an all-zero row (the judge's own choice)."""
    amax = w.abs().amax(dim=1)
    return torch.where(amax > 0, amax / 127, torch.ones_like(amax))  # nan-safe: the judge's own finite weight


def judge_int8(w: torch.Tensor) -> torch.Tensor:
    return torch.clamp(torch.round(w.double() / judge_scale(w).double()[:, None]), -127, 127).to(torch.int8)


def judge_dequant(w: torch.Tensor) -> torch.Tensor:
    return judge_int8(w).to(torch.float32) * judge_scale(w)[:, None]


def judge_forward(w: torch.Tensor, b, x: torch.Tensor) -> torch.Tensor:
    deq = judge_dequant(w).to(x.dtype)
    out = x @ deq.T
    return out if b is None else out + b.to(x.dtype)


# -------------------------------------------------------------------- comparisons


def kind(value) -> str:
    if isinstance(value, Opaque):
        return f"a {value.type_name}"
    if isinstance(value, torch.Tensor):
        return f"a {value.dtype} tensor of shape {tuple(value.shape)}"
    return repr(value)[:60]


def built(report: dict) -> dict:
    """A build probe's answer, after making sure from_float returned a module."""
    if "returned" in report:
        raise AssertionError(f"QuantLinear.from_float(linear) must return a QuantLinear (an nn.Module), "
                             f"it returned {report['returned']}")
    return report


def check_scale(got, w: torch.Tensor, where: str) -> torch.Tensor:
    """scale: float32 (out,), max|W|/127 on non-zero rows (rtol 1e-6), positive and finite on zero rows."""
    scale = expect_tensor(got, shape=(w.shape[0],), dtype=torch.float32, name=f"{where}: scale")
    nonzero = w.abs().amax(dim=1) > 0  # nan-safe: the judge's own finite weight
    if bool(nonzero.any()):
        expect_close(scale[nonzero], judge_scale(w)[nonzero], f"{where}: scale of the non-zero rows",
                     atol=0.0, rtol=1e-6, note="scale[i] = max_j |W[i, j]| / 127, per output row")
    if bool((~nonzero).any()):
        expect_bounded(scale[~nonzero].min(), name=f"{where}: scale of the all-zero rows", at_least=1e-45,
                       note="an all-zero row needs a positive finite scale (1.0 is the usual choice), never 0")
    return scale


def check_int8(got, w: torch.Tensor, where: str) -> torch.Tensor:
    """weight_int8: int8 (out, in), each value the nearest integer to W / (max|W|/127), in [-127, 127]."""
    q = expect_tensor(got, shape=tuple(w.shape), dtype=torch.int8, name=f"{where}: weight_int8")
    if bool((q == -128).any()):
        rows = sorted({int(i) for i in (q == -128).nonzero()[:, 0]})
        raise AssertionError(f"{where}: weight_int8 holds -128 (rows {rows}); the range is symmetric, "
                             f"[-127, 127]")
    t = w.double() / judge_scale(w).double()[:, None]
    lo = torch.ceil(t - 0.5 - TIE).clamp(-127, 127)  # nan-safe: the judge's own numbers, from a finite weight
    hi = torch.floor(t + 0.5 + TIE).clamp(-127, 127)  # nan-safe: the judge's own numbers, from a finite weight
    qd = q.double()
    wrong = (qd < lo) | (qd > hi)  # nan-safe: int8 values against the judge's integer bounds
    if bool(wrong.any()):
        i, j = (int(v) for v in wrong.nonzero()[0])
        raise AssertionError(f"{where}: weight_int8[{i}, {j}] is {int(q[i, j])}, but W / scale there is "
                             f"{float(t[i, j]):.6f}: expected round() of it, {int(judge_int8(w)[i, j])} "
                             f"({int(wrong.sum())} of {q.numel()} values wrong)")
    return q


def check_half_step(q: torch.Tensor, scale: torch.Tensor, w: torch.Tensor, where: str) -> None:
    """|q * scale - W| <= scale / 2 everywhere (relative slack 1e-5 for float32 rounding)."""
    deq = q.double() * scale.double()[:, None]
    excess = ((deq - w.double()).abs() - scale.double()[:, None] * (0.5 + 1e-5)).max()
    expect_bounded(excess, name=f"{where}: max over entries of |weight_int8 * scale - W| - scale / 2", at_most=0.0,
                   note="every dequantised entry must lie within half a quantisation step of the float weight")


def check_forward(got, w: torch.Tensor, b, x: torch.Tensor, where: str, *, rtol: float = 1e-5) -> None:
    """Output of x's dtype and shape, within rtol * (|x| @ |dequant|.T + |b|) + 1e-6 of the judge's."""
    want = judge_forward(w, b, x)
    out = expect_tensor(got, shape=tuple(want.shape), dtype=x.dtype, name=f"{where}: forward(x)")
    scale = x.abs().double() @ judge_dequant(w).abs().double().T
    if b is not None:
        scale = scale + b.abs().double()
    excess = ((out.double() - want.double()).abs() - rtol * scale - 1e-6).max()
    expect_bounded(excess, name=f"{where}: max over outputs of |forward(x) - (x @ dequant.T + b)| - allowed",
                   at_most=0.0, note=f"allowed: {rtol:g} * (|x| @ |dequant|.T + |b|) + 1e-6, elementwise")
