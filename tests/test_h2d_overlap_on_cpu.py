"""h2d_overlap's checks against its whole corpus, on a model of CUDA streams (``cuda_stream_sim``), without a GPU.

The exercise is GPU-required; it was graded on an H200 once (docs/gpu.md, "What has and has not run on a
GPU"), and CI has no GPU. Its solutions use only streams, events, non-blocking copies and a few
tensor methods, so they run here on a model of what CUDA does with them: one copy engine and one compute engine, streams in
order, events and waits between them, the host waiting only where CUDA makes it. On that model
the checks' rules (one output per batch, right, on the device; fn on the caller's stream; no
kernel reading a batch still being copied; the overlap measure the probe computes; the caller's
list unchanged) must pass the reference and both variants and fail each mutant as its
description says. A real GPU's timings and races are what this cannot show.
"""

from __future__ import annotations

import pytest
import torch

from grader.corpus import corpus
from grader.exercise import load_exercise
from tests.cuda_stream_sim import Clock, Stream, Tensor, kernel, load

EX = load_exercise("h2d_overlap")
COUNT = 6
MIN_OVERLAP = 0.4  # as checks/_h2d_overlap_helpers.py

#: The rules each file breaks on the model (exactly), as its description says.
EXPECTED = {
    "reference": set(), "every_copy_up_front": set(), "wait_stream_and_keep_references": set(),
    "two_lanes_alternating": set(),
    "copies_on_the_callers_stream": {"overlap"},
    "fn_reads_before_the_copy_finished": {"complete"},
    "fn_on_the_copy_stream": {"stream", "overlap"},
    "forges_its_instruments": {"stream", "overlap"},  # fn_on_the_copy_stream, with a forged log that nothing reads
    "drops_the_last_batch": {"returns"},
    "outputs_moved_to_the_host": {"returns"},
    "first_batch_not_awaited": {"complete"},
    "synchronizes_after_every_batch": {"overlap"},
    "pops_the_callers_list": {"unchanged"},
}


def _sources(tmp_path):
    for item in corpus(EX, more=True):
        if item.kind == "stub":
            continue
        yield ("reference" if item.kind == "reference" else item.name), item.gradable(tmp_path).read_text()


def run(source: str, *, default_stream: bool, copy_s: float = 2.0, kernel_s: float = 2.0) -> dict:
    """One call of overlapped_map on the model, as the probe makes it; what the checks would read."""
    clock = Clock(copy_s, kernel_s)
    module = load(source, clock, "h2d_overlap")
    caller = clock.default if default_stream else Stream(clock)
    clock.current = caller
    batches = [Tensor(clock, torch.full((4,), float(i)), "cpu", pinned=True) for i in range(COUNT)]
    given = list(batches)
    calls = []

    def fn(x):
        calls.append(clock.current is caller and isinstance(x, Tensor) and x.device_type == "cuda")
        return kernel(x, lambda v: v * 2 + 1)

    clock.synchronize()
    start = clock.host
    outputs = module.overlapped_map(fn, given, torch.device("cuda"))
    clock.synchronize()
    seconds = clock.host - start
    serial_copies, serial_compute = COUNT * copy_s, COUNT * kernel_s
    return {"outputs": outputs, "calls": calls, "given": given, "batches": batches,
            "overlap": (serial_copies + serial_compute - seconds) / min(serial_copies, serial_compute)}


def broken_rules(got: dict) -> set[str]:
    broken = set()
    outputs = got["outputs"]
    if len(outputs) != COUNT or any(out.device_type != "cuda" for out in outputs):
        broken.add("returns")
    elif any(not torch.equal(out.value, torch.full((4,), 2.0 * i + 1)) for i, out in enumerate(outputs)):
        broken.add("complete")  # NaN where a kernel read its batch before the copy finished
    if len(got["calls"]) != len(outputs) or not all(got["calls"]):
        broken.add("stream")
    if not got["overlap"] >= MIN_OVERLAP:  # nan-safe: the model's own numbers
        broken.add("overlap")
    if got["given"] != got["batches"]:
        broken.add("unchanged")
    return broken


@pytest.mark.parametrize("default_stream", [False, True], ids=["own stream", "default stream"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_file_breaks_exactly_the_rules_its_description_names(name, default_stream, tmp_path):
    source = dict(_sources(tmp_path))[name]
    got = run(source, default_stream=default_stream)
    assert broken_rules(got) == EXPECTED[name], (round(got["overlap"], 3), broken_rules(got))


def test_every_file_has_an_expectation(tmp_path):
    assert {name for name, _ in _sources(tmp_path)} == set(EXPECTED)


@pytest.mark.parametrize("copy_s, kernel_s", [(2.0, 2.0), (1.0, 3.0), (3.0, 1.0)])
def test_the_measure_rewards_prefetching_whatever_the_balance(copy_s, kernel_s, tmp_path):
    """One batch ahead reaches 1 - 1/6 when copies and compute balance, and still clears the bar when the probe's
    calibration misses by 3x; copying on the caller's stream stays near 0 (copy + compute, one after another)."""
    sources = dict(_sources(tmp_path))
    ahead = run(sources["reference"], default_stream=False, copy_s=copy_s, kernel_s=kernel_s)["overlap"]
    serial = run(sources["copies_on_the_callers_stream"], default_stream=False, copy_s=copy_s,
                 kernel_s=kernel_s)["overlap"]
    if copy_s == kernel_s:
        assert ahead == pytest.approx(1 - 1 / COUNT)
    assert ahead >= 0.6 and serial <= 0.05
