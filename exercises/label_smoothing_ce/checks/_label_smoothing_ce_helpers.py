"""Judge-side helpers for the label_smoothing_ce checks: cases, strategies, the expected
values (torch's own F.cross_entropy, run here in the judge) and the comparisons.

The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from grader.judge import Tolerance, Tolerances, expect_close, expect_gradient, expect_tensor, shapes

#: float32: a log-sum-exp over at most 6 classes, ~1e-6 relative; float64 at torch's own defaults.
TOL = Tolerances(float32=Tolerance(atol=1e-5, rtol=1e-5), float64=Tolerance(atol=1e-7, rtol=1e-7))
DTYPES = {"float32": torch.float32, "float64": torch.float64}
REDUCTIONS = ("mean", "sum", "none")
#: The signature's default, as the README states it.
DEFAULT_IGNORE_INDEX = -100


@dataclass(frozen=True)
class Case:
    """One call: shapes, arguments, and how the tensors are drawn from the seed.

    ``ignored`` is the share of positions whose target is set to ``ignore_index``
    (drawn per position); ``scale`` multiplies standard normal logits. ``pass_ignore_index=False``
    leaves ``ignore_index`` out of the call, so the signature's default must supply it (only
    for ``ignore_index == DEFAULT_IGNORE_INDEX``: the expected values use ``ignore_index``).
    """

    N: int = 4
    C: int = 5
    extra: tuple[int, ...] = ()
    epsilon: float = 0.0
    ignore_index: int = -100
    ignored: float = 0.0
    reduction: str = "mean"
    dtype: str = "float64"
    scale: float = 1.0
    seed: int = 0
    pass_ignore_index: bool = True

    def tensors(self) -> tuple[torch.Tensor, torch.Tensor]:
        g = torch.Generator().manual_seed(self.seed)
        logits = torch.randn((self.N, self.C, *self.extra), generator=g, dtype=DTYPES[self.dtype]) * self.scale
        target = torch.randint(0, self.C, (self.N, *self.extra), generator=g)
        drop = torch.rand((self.N, *self.extra), generator=g) < self.ignored
        return logits, torch.where(drop, torch.full_like(target, self.ignore_index), target)

    def out_shape(self) -> tuple[int, ...]:
        return (self.N, *self.extra) if self.reduction == "none" else ()

    def grad_out(self) -> torch.Tensor:
        """Weights for sum(out * grad_out), so that 'none' gradients are not all the same."""
        g = torch.Generator().manual_seed(self.seed + 1)
        return torch.rand(self.out_shape(), generator=g, dtype=DTYPES[self.dtype]) + 0.5

    def kwargs(self) -> dict:
        passed = {"ignore_index": self.ignore_index} if self.pass_ignore_index else {}
        return {"epsilon": self.epsilon, **passed, "reduction": self.reduction}

    def describe(self) -> str:
        logits, target = self.tensors()
        shown = target.tolist() if target.numel() <= 24 else f"a tensor of shape {tuple(target.shape)}"
        ignore = (f"ignore_index={self.ignore_index}" if self.pass_ignore_index else
                  f"ignore_index not passed (the default, {self.ignore_index})")
        return (f"logits of shape {tuple(logits.shape)} ({self.dtype}, scale {self.scale}), target {shown}, "
                f"epsilon={self.epsilon}, {ignore}, reduction={self.reduction!r}")


def expected(case: Case, with_grad: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
    """torch's loss for the case, and the gradient of sum(out * grad_out) when asked."""
    logits, target = case.tensors()
    logits.requires_grad_(with_grad)
    out = F.cross_entropy(logits, target, label_smoothing=case.epsilon, ignore_index=case.ignore_index,
                          reduction=case.reduction)
    if not with_grad:
        return out.detach(), None
    (grad,) = torch.autograd.grad((out * case.grad_out()).sum(), [logits])
    return out.detach(), grad


def check(sandbox, case: Case, with_grad: bool = False) -> None:
    """The candidate's loss (and gradient) for the case equal torch's."""
    logits, target = case.tensors()
    result = sandbox.call("ce", logits, target, case.grad_out() if with_grad else None, **case.kwargs())
    want, want_grad = expected(case, with_grad)
    where = case.describe()
    finite = bool(torch.isfinite(want).all())
    got = expect_tensor(result["out"], shape=case.out_shape(), dtype=want.dtype, finite=finite,
                        name=f"the loss for {where}")
    expect_close(got, want, f"the loss for {where}", nan_where_expected=True, tol=TOL)
    if want_grad is None or not finite:
        return
    grad = expect_gradient(result["grad"], "logits", want_grad, why=result["why"])
    expect_close(grad, want_grad, f"the gradient w.r.t. logits for {where}", tol=TOL)


# ----------------------------------------------------------------------- strategies

sizes_N = st.integers(1, 6)
sizes_C = st.integers(2, 6)
#: Multiples of 1/20 in [0, 1]: 0 and 1 included, and values where C - 1 and C differ.
epsilons = st.integers(0, 20).map(lambda k: k / 20)
ignored_shares = st.sampled_from([0.0, 0.25, 0.5, 0.75])
reductions = st.sampled_from(REDUCTIONS)
extra_dims = shapes(dims=(1, 2), sides=(1, 3))
ignore_indices = st.sampled_from([-100, -1, 0, 1])
dtypes = st.sampled_from(list(DTYPES))
