"""Judge-side helpers for the running_stats checks: cases, the BatchNorm1d reference, comparisons.

nn.BatchNorm1d is forbidden to the candidate, not to the judge: here it is the
reference, driven exactly as probes.drive drives the candidate's RunningNorm.
The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from hypothesis import strategies as st
from torch import nn

from grader.judge import Tolerances, call, expect_close, expect_tensor, seeds
from shared import STATS, prepared

#: The presets: at most 6 rows and 4 features per batch, values O(1).
TOL = Tolerances()
KEYS = sorted(["weight", "bias", *STATS])

#: The signature's defaults, as the README states them (RunningNorm(C) == BatchNorm1d(C, momentum=0.1, eps=1e-5)).
DEFAULT_MOMENTUM, DEFAULT_EPS = 0.1, 1e-5

momenta = st.sampled_from([0.1, 0.3, 0.75, 1.0])  # never 0.5: an inverted momentum must show
epsilons = st.sampled_from([1e-5, 1e-3, 0.1, 1.0])  # large ones make a missing eps show


@dataclass(frozen=True)
class Case:
    """num_features C, the batch sizes of the train steps, momentum, eps, and a seed for the data.

    ``passed=False`` builds RunningNorm(C) with neither momentum nor eps given, so the
    signature's defaults must supply them (use :func:`with_defaults`); the reference
    is then built with the README's values, not with whatever BatchNorm1d defaults to.
    """

    features: int
    batches: tuple[int, ...]
    momentum: float = DEFAULT_MOMENTUM
    eps: float = DEFAULT_EPS
    seed: int = 0
    passed: bool = True

    @property
    def kwargs(self) -> dict:
        return {"momentum": self.momentum, "eps": self.eps} if self.passed else {}

    def describe(self) -> str:
        built = (f"RunningNorm({self.features}, momentum={self.momentum}, eps={self.eps})" if self.passed else
                 f"RunningNorm({self.features}) (the defaults: momentum={self.momentum}, eps={self.eps})")
        return f"{built}, train batches of {list(self.batches)} rows"

    def data(self, dtype=torch.float32):
        """weight, bias and one x per train batch (means and scales far from 0 and 1), and the generator."""
        g = torch.Generator().manual_seed(self.seed)
        weight = torch.rand(self.features, generator=g, dtype=dtype) + 0.5
        bias = torch.randn(self.features, generator=g, dtype=dtype)
        xs = [torch.randn(n, self.features, generator=g, dtype=dtype) * 2 + 1.5 for n in self.batches]
        return weight, bias, xs, g


def with_defaults(features: int, batches: tuple[int, ...], seed: int) -> Case:
    """A case whose module is built as RunningNorm(features): momentum and eps left to the signature."""
    return Case(features, batches, DEFAULT_MOMENTUM, DEFAULT_EPS, seed, passed=False)


@st.composite
def cases(draw, *, max_steps: int = 3) -> Case:
    return Case(
        features=draw(st.integers(1, 4)),
        batches=tuple(draw(st.lists(st.integers(2, 6), min_size=1, max_size=max_steps))),
        momentum=draw(momenta),
        eps=draw(epsilons),
        seed=draw(seeds()),
    )


# ---------------------------------------------------------------------- reference


def reference(case: Case, steps, *, weight=None, bias=None, dtype=None, load=None) -> dict:
    """nn.BatchNorm1d driven like probes.drive; the same structure back."""
    bn = prepared(nn.BatchNorm1d(case.features, momentum=case.momentum, eps=case.eps),
                  weight=weight, bias=bias, dtype=dtype, load=load)
    trace = []
    for mode, x, grad_out in steps:
        bn.train(mode == "train")
        x = x.detach().clone().requires_grad_(grad_out is not None)
        out = bn(x)
        record = {"out": out.detach().clone(),
                  "stats": {n: getattr(bn, n).detach().clone() for n in STATS}, "grads": None}
        if grad_out is not None:
            (out * grad_out).sum().backward()
            record["grads"] = {"x": x.grad.clone(), "weight": bn.weight.grad.clone(), "bias": bn.bias.grad.clone()}
            bn.zero_grad(set_to_none=True)
        trace.append(record)
    return {"steps": trace, "state_dict": {k: v.detach().clone() for k, v in bn.state_dict().items()}}


def drive(sandbox, case: Case, steps, **kwargs) -> tuple[dict, dict]:
    """Run the candidate (probe drive) and the reference on the same steps."""
    got = call(sandbox, "drive", case.features, case.kwargs, steps, **kwargs)
    if not isinstance(got.get("steps"), list) or len(got["steps"]) != len(steps):
        raise AssertionError(f"probe drive returned {got!r}")
    return got, reference(case, steps, **kwargs)


def train_steps(xs) -> list:
    return [["train", x, None] for x in xs]


# -------------------------------------------------------------------- comparisons


def check_stat(got: dict, want: torch.Tensor, name: str, where: str) -> None:
    """One running statistic: its value, dtype and shape as BatchNorm1d's."""
    value = expect_tensor(got["value"], shape=tuple(want.shape), dtype=want.dtype, name=f"{where}: {name}")
    if want.dtype == torch.int64:
        if not torch.equal(value, want):
            raise AssertionError(f"{where}: {name} is {value.item()}, expected {want.item()}")
    else:
        expect_close(value, want, f"{where}: {name}", tol=TOL)


def check_stats(got_step: dict, want_step: dict, where: str, names=STATS) -> None:
    for name in names:
        check_stat(got_step["stats"][name], want_step["stats"][name], name, where)


def check_out(got_step: dict, want_step: dict, where: str) -> None:
    want = want_step["out"]
    out = expect_tensor(got_step["out"], shape=tuple(want.shape), dtype=want.dtype, name=f"{where}: output")
    expect_close(out, want, f"{where}: output", tol=TOL)


def check_state_dict(got, want: dict, what: str) -> None:
    """The same keys, shapes, dtypes and values as BatchNorm1d's state_dict."""
    if not isinstance(got, dict) or sorted(got) != sorted(want):
        keys = sorted(got) if isinstance(got, dict) else got
        raise AssertionError(f"{what}: state_dict() keys must be {sorted(want)} as in BatchNorm1d, got {keys}")
    for key, expected in want.items():
        value = expect_tensor(got[key], shape=tuple(expected.shape), dtype=expected.dtype,
                              name=f"{what}: state_dict()[{key!r}]")
        expect_close(value, expected, f"{what}: state_dict()[{key!r}]", tol=TOL)
