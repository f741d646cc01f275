"""Probes for the h2d_overlap exercise. They run INSIDE the sandbox, on its GPU.

The candidate's ``overlapped_map(fn, batches, device)`` is given pinned CPU batches and an ``fn``
made here (:class:`Fn`), which records every call: whether it ran with the caller's stream
current, and what it was given. It records in a ``probekit.Ledger`` it finds by its identity,
with its settings (device, the caller's stream, the work per call): nothing on the ``fn`` itself. ``mapped`` and ``first_batch_complete`` return the outputs (CPU
copies, or values at positions the judge chose); ``overlap_timing`` times, by the wall clock
around a device-wide synchronize, the probe's own copies alone, its own compute alone, one copy
beside one kernel (can this GPU overlap at all?) and the candidate's call, several times
interleaved. Probes return plain data and never judge.
"""

from __future__ import annotations

import time

import torch

import h2d_overlap
import shared
from grader.sandbox import probekit

#: The overlap check's batches are sized so that copying one takes about this long (seconds) ...
TARGET_COPY_S = 0.002
#: ... from 8 MiB, doubling, up to this many float32 values (128 MiB).
MIN_NUMEL, MAX_NUMEL = 2**21, 2**25


def _device() -> torch.device:
    return torch.device("cuda", torch.cuda.current_device())


def _what(x, device: torch.device) -> str:
    if not isinstance(x, torch.Tensor):
        return f"a {type(x).__name__}"
    return f"a {x.device.type} tensor" if x.device.type != device.type else "a tensor on the device"


class Fn:
    """The fn handed to the candidate: ``x * 2 + 1`` (or ``shared.work``, timed runs) on the current stream,
    noting each call's stream and input in its ledger."""

    def __call__(self, x):
        ledger, (device, caller, reps) = probekit.attached(self)
        stream = torch.cuda.current_stream(device)
        ledger.note({"on_callers_stream": stream.cuda_stream == caller.cuda_stream, "input": _what(x, device)})
        return x * 2 + 1 if reps is None else shared.work(x, reps)


def _fn(device: torch.device, caller: torch.cuda.Stream, reps: int | None = None) -> tuple[Fn, probekit.Ledger]:
    """An Fn and the ledger it notes its calls in."""
    ledger = probekit.Ledger()
    return ledger.attach(Fn(), (device, caller, reps)), ledger


def _copy(value):
    """An output as a CPU copy, on the current stream (so after the caller's work); anything else described."""
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True)
    return probekit.opaque(value)


def _device_type(value):
    return value.device.type if isinstance(value, torch.Tensor) else None


def mapped(batches):
    """overlapped_map(fn, pinned copies of ``batches``, device) with a stream of the probe's own current.

    Returns {"outputs": CPU copies, "devices": each output's device type, "calls": what fn saw,
    "batches_after": the list's length and its tensors' values as the candidate left them}."""
    dev = _device()
    pinned = [b.pin_memory() for b in batches]
    given = list(pinned)
    caller = torch.cuda.Stream(dev)
    fn, ledger = _fn(dev, caller)
    with torch.cuda.stream(caller):
        result = h2d_overlap.overlapped_map(fn, given, dev)
        if not isinstance(result, list):
            torch.cuda.synchronize(dev)
            return probekit.returned_instead(result)
        outputs = [_copy(out) for out in result]  # ordered after the caller's stream: no extra wait
    torch.cuda.synchronize(dev)
    return {"outputs": outputs, "devices": [_device_type(out) for out in result], "calls": list(ledger.events),
            "batches_after": {"length": len(given), "values": [_copy(b) for b in given]}}


def first_batch_complete(seed, big_numel, numel, count, positions):
    """A large first batch (copying it takes milliseconds) and ``count - 1`` small ones, ``x * 2 + 1`` each.

    Returns {"samples": each output at ``positions`` (modulo its size), "devices", "calls"}."""
    dev = _device()
    batches = [shared.batch(seed, i, big_numel if i == 0 else numel).pin_memory() for i in range(count)]
    fn, ledger = _fn(dev, torch.cuda.current_stream(dev))
    result = h2d_overlap.overlapped_map(fn, batches, dev)
    torch.cuda.synchronize(dev)
    if not isinstance(result, list):
        return probekit.returned_instead(result)
    return {"samples": [_sample(out, positions) for out in result], "devices": [_device_type(o) for o in result],
            "calls": list(ledger.events)}


def _sample(out, positions):
    if not isinstance(out, torch.Tensor) or out.numel() == 0:
        return probekit.opaque(out)
    flat = out.detach().reshape(-1)
    return flat[torch.tensor(positions, device=flat.device) % flat.numel()].to("cpu")


def _timed(device: torch.device, run) -> float:
    torch.cuda.synchronize(device)
    start = time.perf_counter()
    run()
    torch.cuda.synchronize(device)
    return time.perf_counter() - start


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def _copies(batches, device, stream):
    with torch.cuda.stream(stream):
        return [b.to(device, non_blocking=True) for b in batches]


def _calibrate(device: torch.device, side: torch.cuda.Stream) -> tuple[int, int, float]:
    """(numel, reps, one copy's seconds): a batch whose copy takes about TARGET_COPY_S, and as many rounds of
    shared.work as take about as long on it."""
    staging = torch.empty(MAX_NUMEL, dtype=torch.float32, pin_memory=True)
    numel = MIN_NUMEL
    while True:
        copy_s = _median([_timed(device, lambda: _copies([staging[:numel]], device, side)) for _ in range(3)])
        if copy_s >= TARGET_COPY_S or numel >= MAX_NUMEL:
            break
        numel *= 2
    x = torch.full((numel,), 0.5, device=device)
    step_s = _median([_timed(device, lambda: shared.work(x, 8)) for _ in range(3)]) / 8
    reps = max(1, min(5000, round(copy_s / max(step_s, 1e-7))))
    return numel, reps, copy_s


def overlap_timing(seed, count, runs, positions):
    """Batches sized so one copy and fn on one batch each take about TARGET_COPY_S; then ``runs`` times, in turn:
    the probe's own copies of all batches on a side stream, its own fn on all of them already on the device, one
    copy beside one fn (both at once), and the candidate's call. Seconds, by the wall clock around
    torch.cuda.synchronize(); and the last call's outputs at ``positions``."""
    dev = _device()
    caller, side = torch.cuda.current_stream(dev), torch.cuda.Stream(dev)
    numel, reps, copy_s = _calibrate(dev, side)
    batches = [shared.batch(seed, i, numel).pin_memory() for i in range(count)]
    resident = [b.to(dev) for b in batches]
    fn, ledger = _fn(dev, caller, reps)
    times = {"copies": [], "compute": [], "pair": [], "call": []}
    result = None
    for _ in range(runs):
        times["copies"].append(_timed(dev, lambda: _copies(batches, dev, side)))
        times["compute"].append(_timed(dev, lambda: [shared.work(x, reps) for x in resident]))
        times["pair"].append(_timed(dev, lambda: (_copies(batches[:1], dev, side), shared.work(resident[-1], reps))))
        ledger.events.clear()
        torch.cuda.synchronize(dev)
        start = time.perf_counter()
        result = h2d_overlap.overlapped_map(fn, batches, dev)
        torch.cuda.synchronize(dev)
        times["call"].append(time.perf_counter() - start)
    if not isinstance(result, list):
        return probekit.returned_instead(result)
    return {"seconds": times, "numel": numel, "reps": reps, "calibrated_copy_s": copy_s, "count": count,
            "samples": [_sample(out, positions) for out in result], "devices": [_device_type(o) for o in result],
            "calls": list(ledger.events)}
