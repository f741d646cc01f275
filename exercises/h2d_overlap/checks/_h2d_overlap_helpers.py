"""The judge's side of h2d_overlap: expected outputs, and the overlap measure from the probe's times."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from grader.judge import expect_equal, expect_tensor

#: The overlap a call must reach: (copies + compute - call) / min(copies, compute), from medians.
MIN_OVERLAP = 0.4
#: Below this, the GPU grading did not overlap even the probe's own single copy beside a single kernel.
MIN_CAPABILITY = 0.5


def expect_outputs(got: dict, batches: list[torch.Tensor], *, what: str) -> None:
    """One output per batch, in order, on the GPU, each exactly ``batch * 2 + 1``."""
    outputs = got["outputs"]
    expect_equal(len(outputs), len(batches), name=f"{what}: the number of outputs",
                 note="overlapped_map returns one output per batch, in order")
    expect_equal(got["devices"], ["cuda"] * len(batches), name=f"{what}: the device of each output",
                 note="return fn's outputs as they are, on the device")
    for i, (out, batch) in enumerate(zip(outputs, batches)):
        value = expect_tensor(out, shape=tuple(batch.shape), dtype=torch.float32, name=f"{what}: output {i}")
        if not torch.equal(value, batch * 2 + 1):
            wrong = int((value != batch * 2 + 1).sum())
            raise AssertionError(f"{what}: output {i} differs from fn(batch {i}) at {wrong} of {value.numel()} "
                                 "values: was the batch completely copied before fn read it, and in its place?")


def expect_calls(calls: list[dict], count: int, *, what: str) -> None:
    """fn called once per batch, each time on a tensor on the device with the caller's stream current."""
    expect_equal(len(calls), count, name=f"{what}: the number of times fn was called",
                 note="call fn exactly once per batch")
    for i, call in enumerate(calls):
        expect_equal(call["input"], "a tensor on the device", name=f"{what}: what fn was given at call {i}")
        if call["on_callers_stream"] is not True:
            raise AssertionError(f"{what}: fn call {i} ran with another stream current than the caller's: call fn "
                                 "with the caller's stream current (make it wait for the copy instead)")


@dataclass(frozen=True)
class Overlap:
    copies: float  # seconds, medians
    compute: float
    pair_capability: float
    call: float

    @property
    def overlap(self) -> float:
        return (self.copies + self.compute - self.call) / min(self.copies, self.compute)

    def describe(self) -> str:
        return (f"medians: the probe's copies alone {self.copies * 1e3:.2f} ms, its fn alone {self.compute * 1e3:.2f} "
                f"ms, your call {self.call * 1e3:.2f} ms")


def median(values: list) -> float:
    """The median of the probe's times, which must all be positive finite numbers (the probe's own measure: any
    other value is the grader's failure, raised as such, never the candidate's)."""
    if not values or not all(isinstance(v, float) and 0 < v < 3600 for v in values):  # nan-safe: a NaN fails `0 < v`
        raise RuntimeError(f"the probe's times are not positive seconds: {values!r:.200}")
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def overlap_from(seconds: dict, count: int) -> Overlap:
    copies, compute = median(seconds["copies"]), median(seconds["compute"])
    one_copy, one_compute, pair = copies / count, compute / count, median(seconds["pair"])
    capability = (one_copy + one_compute - pair) / min(one_copy, one_compute)
    return Overlap(copies, compute, capability, median(seconds["call"]))
