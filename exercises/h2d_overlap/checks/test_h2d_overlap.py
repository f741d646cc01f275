"""Checks for overlapped_map(fn, batches, device) on the GPU.

Values: fn(x) = x * 2 + 1 on small batches, compared exactly; fn is the probe's, and records the
stream it ran on. Overlap: timed on the probe's side around the call, against the probe's own
copies and compute on the same batches (``_h2d_overlap_helpers``). Every check needs the GPU (the
exercise's gpu policy is "required": without one the grading is not graded, never scored).
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _h2d_overlap_helpers import MIN_CAPABILITY, MIN_OVERLAP, expect_calls, expect_outputs, overlap_from
from grader.judge import call, expect_bounded, expect_close, expect_equal, expect_returned, expect_tensor
from shared import batch_at, work

pytestmark = pytest.mark.gpu

RETURNS = "a list with one tensor per batch"


def _batches(shapes: list[tuple[int, ...]], seed: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(-1000, 1000, shape, generator=g).to(torch.float32) / 8 for shape in shapes]


shapes = st.lists(st.one_of(st.tuples(st.integers(1, 3000)), st.tuples(st.integers(1, 40), st.integers(1, 70))),
                  min_size=0, max_size=8)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Return fn's outputs in the order of the batches, one per batch, left on the device.")
@given(shapes=shapes, seed=st.integers(0, 2**16))
@example(shapes=[], seed=0)
@example(shapes=[(4096,), (3, 5), (1,)], seed=1)
def test_returns_fn_of_each_batch_in_order(sandbox, shapes, seed):
    """Returns fn(batch) for every batch, in order, on the GPU"""
    batches = _batches(shapes, seed)
    got = expect_returned(call(sandbox, "mapped", batches), function="overlapped_map", returns=RETURNS)
    expect_outputs(got, batches, what=f"{len(batches)} batches")


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Call fn with the caller's stream current (make that stream wait for your copy stream with an "
                  "event), never inside `with torch.cuda.stream(copy_stream)`.")
def test_fn_runs_once_per_batch_on_the_callers_stream(sandbox):
    """fn is called once per batch, in order, on a device tensor, with the caller's stream current"""
    batches = _batches([(512,), (7, 3), (2048,), (1,)], 3)
    got = expect_returned(call(sandbox, "mapped", batches), function="overlapped_map", returns=RETURNS)
    expect_calls(got["calls"], len(batches), what="4 batches, called with a stream of the caller's own current")


@pytest.mark.points(1)
def test_batches_are_left_as_they_were(sandbox):
    """The batches list and its tensors are left as they were"""
    batches = _batches([(100,), (4, 4), (9,)], 4)
    got = expect_returned(call(sandbox, "mapped", batches), function="overlapped_map", returns=RETURNS)
    after = got["batches_after"]
    expect_equal(after["length"], len(batches), name="the length of the batches list after the call",
                 note="read the list; do not pop from it or clear it")
    for i, (value, batch) in enumerate(zip(after["values"], batches)):
        expect_close(expect_tensor(value, shape=tuple(batch.shape), dtype=torch.float32, name=f"batch {i} after"),
                     batch, f"batch {i} after the call", atol=0, rtol=0)


BIG = 2**24  # 64 MiB of float32: copying it takes milliseconds, fn's first kernel starts within microseconds


@pytest.mark.points(2)
def test_each_batch_is_complete_before_fn_reads_it(sandbox):
    """A 64 MiB first batch is completely copied before fn reads it: the caller's stream waits for the copy"""
    positions = torch.linspace(0, BIG - 1, 4096).long().tolist()
    got = expect_returned(call(sandbox, "first_batch_complete", 5, BIG, 4096, 4, positions),
                          function="overlapped_map", returns=RETURNS)
    expect_equal(len(got["samples"]), 4, name="the number of outputs for 4 batches")
    for i, sample in enumerate(got["samples"]):
        numel = BIG if i == 0 else 4096
        where = torch.tensor(positions) % numel
        want = batch_at(5, i, where) * 2 + 1
        value = expect_tensor(sample, shape=(len(positions),), dtype=torch.float32, name=f"output {i} (sampled)")
        expect_close(value, want, f"output {i} at 4096 positions (batch {i} of {numel} values)", atol=0, rtol=0,
                     note="fn read the batch before its copy finished: make the caller's stream wait for the copy "
                          "(Stream.wait_event) before calling fn, for every batch, the first one too")


COUNT, RUNS = 6, 7


@pytest.mark.points(3)
@pytest.mark.hint("Issue the copy of batch i + 1 on your copy stream before calling fn on batch i, and keep the host "
                  "from waiting inside the loop.")
def test_copies_overlap_fn(sandbox):
    """The copy of the next batch runs while fn computes: overlap of at least 0.4, by the probe's clock"""
    positions = torch.linspace(0, 2**21 - 1, 1024).long().tolist()
    got = expect_returned(call(sandbox, "overlap_timing", 6, COUNT, RUNS, positions), function="overlapped_map",
                          returns=RETURNS)
    expect_equal(len(got["samples"]), COUNT, name=f"the number of outputs for {COUNT} batches")
    numel, reps = int(got["numel"]), int(got["reps"])  # the probe's calibration
    for i, sample in enumerate(got["samples"]):
        where = torch.tensor(positions) % numel
        want = work(batch_at(6, i, where), reps)
        value = expect_tensor(sample, shape=(len(positions),), dtype=torch.float32, name=f"timed output {i}")
        expect_close(value, want, f"timed output {i} (sampled)", atol=1e-5, rtol=0)
    measured = overlap_from(got["seconds"], COUNT)
    if not measured.pair_capability >= MIN_CAPABILITY:  # nan-safe: `not >=` refuses NaN too; the probe's own measure
        raise RuntimeError(f"this GPU did not overlap the probe's own copy with a kernel (capability "
                           f"{measured.pair_capability:.2f} < {MIN_CAPABILITY}): the overlap check cannot be graded on "
                           "it; grade on another GPU")
    expect_bounded(measured.overlap, name="overlap of your copies with fn (median of 7 runs)", at_least=MIN_OVERLAP,
                   note=f"{measured.describe()}; 1 hides the shorter of copies and compute completely, 0 runs them "
                        f"one after the other (README, Decisions, \"What is measured\")")
