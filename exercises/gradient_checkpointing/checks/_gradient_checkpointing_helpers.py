"""Judge-side helpers for the gradient_checkpointing checks: inputs, the plain loop's answers, comparisons.

The judge's answer to the contract is the plain loop ``for block in blocks: x = block(x)``
over the same blocks (``shared.py``), run under the same torch seed, so it draws the same
dropout masks a correct checkpointed forward draws. Everything is float64 on the CPU.

The file name is exercise-specific so that it never clashes with another exercise's
helpers in one judge process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.judge import Tolerances, call, expect_close, expect_equal, expect_gradient, expect_returned, expect_tensor
from shared import load, make_blocks

TOL = Tolerances()  # float64: 1e-10, the same ops in the same order
DTYPE = torch.float64


@st.composite
def layouts(draw, *, blocks=(1, 8), per_segment_at_least: int = 1):
    """(n, segments): n blocks, 1 <= segments <= n // per_segment_at_least."""
    n = draw(st.integers(max(blocks[0], per_segment_at_least), blocks[1]))
    return n, draw(st.integers(1, n // per_segment_at_least))


@dataclass
class Case:
    """One model and its inputs: n blocks of width ``width``, x of shape (rows, width)."""

    n: int
    segments: int
    width: int
    rows: int
    p: float
    seed: int
    container: str = "list"

    def __post_init__(self):
        g = torch.Generator().manual_seed(self.seed)
        bound = 1 / math.sqrt(self.width)
        self.params = {}
        for i in range(self.n):
            self.params[f"{i}.linear.weight"] = (torch.rand(self.width, self.width, generator=g, dtype=DTYPE) * 2 - 1) * bound
            self.params[f"{i}.linear.bias"] = (torch.rand(self.width, generator=g, dtype=DTYPE) * 2 - 1) * bound
        self.x = torch.randn(self.rows, self.width, generator=g, dtype=DTYPE)
        self.grad_out = torch.randn(self.rows, self.width, generator=g, dtype=DTYPE)
        self.torch_seed = self.seed % (2**31)

    def describe(self) -> str:
        blocks = "blocks" if self.container == "list" else "nn.ModuleList(blocks)"
        return (f"checkpointed_forward({blocks}, x, segments={self.segments}) with {self.n} block(s) of "
                f"width {self.width}, dropout p={self.p}, x of shape {tuple(self.x.shape)}, torch seed "
                f"{self.torch_seed}")

    def run(self, sandbox, **kwargs) -> dict:
        """The probe's report, once it is a dict and the candidate returned a tensor."""
        report = call(sandbox, "run", self.n, self.width, self.p, self.params, self.x, self.grad_out, self.segments,
                      seed=self.torch_seed, container=self.container, **kwargs)
        return expect_returned(report, function="checkpointed_forward", returns="a tensor")

    def plain(self, *, x_requires_grad: bool = True, params_require_grad: bool = True, no_grad: bool = False) -> dict:
        """The plain loop under the same seed: out, x_grad, grads ({name: tensor or None}), rng_after_forward."""
        blocks = load(make_blocks(self.n, self.width, self.p), self.params, requires_grad=params_require_grad)
        x = self.x.clone().requires_grad_(x_requires_grad)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.torch_seed)
            with torch.set_grad_enabled(not no_grad):
                out = x
                for block in blocks:
                    out = block(out)
            rng_after_forward = torch.get_rng_state()
            if out.requires_grad:
                out.backward(self.grad_out)
        return {"out": out.detach(), "x_grad": x.grad,
                "grads": {name: p.grad for name, p in blocks.named_parameters()},
                "rng_after_forward": rng_after_forward}


def segment_indices(n: int, segments: int) -> list[list[int]]:
    """The contract's split: contiguous, as equal as possible, the larger segments first."""
    size, extra = divmod(n, segments)
    out, start = [], 0
    for i in range(segments):
        stop = start + size + (1 if i < extra else 0)
        out.append(list(range(start, stop)))
        start = stop
    return out


def check_output(report: dict, case: Case, want: dict) -> None:
    what = f"output of {case.describe()}"
    out = expect_tensor(report["out"], shape=tuple(case.x.shape), dtype=DTYPE, name=what)
    expect_close(out, want["out"], what, tol=TOL)


def expect_backward_ran(report: dict, case: Case) -> None:
    """The probe ran out.backward(grad); else fail, saying why it could not."""
    if report["backward_ran"] is True:
        return
    out = report["out"]
    if type(out) is torch.Tensor and tuple(out.shape) != tuple(case.x.shape):
        why = f"the output has shape {tuple(out.shape)}, not x's {tuple(case.x.shape)}"
    else:
        why = "the output does not require grad"
    raise AssertionError(f"{case.describe()}: out.backward(grad) could not run: {why}; the parameters (and x "
                         "when it requires grad) need their gradients")


def check_gradients(report: dict, case: Case, want: dict, *, note: str | None = None) -> None:
    """x.grad (when x required grad) and every parameter's .grad, against the plain loop's."""
    what = case.describe()
    expect_backward_ran(report, case)
    if want["x_grad"] is not None:
        got = expect_gradient(report["x_grad"], f"x after {what} and out.backward(grad)", case.x,
                              why="the gradient must flow back through every segment to x")
        expect_close(got, want["x_grad"], f"x.grad after {what}", tol=TOL, note=note)
    grads = report["grads"]
    if not isinstance(grads, dict) or sorted(grads) != sorted(want["grads"]):
        raise AssertionError(f"{what}: the probe's parameter gradients came back as {type(grads).__name__}")
    for name, expected in want["grads"].items():
        got = expect_gradient(grads[name], f"parameter {name} after {what} and out.backward(grad)", expected,
                              why="every block's parameters need their gradient")
        expect_close(got, expected, f"gradient of parameter {name} after {what}", tol=TOL, note=note)


def check_calls(calls, want: list, *, what: str, note: str) -> None:
    """The blocks' call log ([[index, grad enabled], ...]) against ``want``, exactly."""
    expect_equal(calls, want, name=what, note=note)
