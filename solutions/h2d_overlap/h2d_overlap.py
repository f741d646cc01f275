"""Reference: a one-batch-ahead prefetch on a copy stream, ordered with CUDA events.

The copy of batch i + 1 is enqueued on a side stream before fn is called on batch i, so the GPU's
copy engine moves it while the compute engine runs fn. The caller's stream waits for each copy
on the GPU (``wait_event``), never the host; ``record_stream`` tells the caching allocator that a
batch made on the copy stream is used on the caller's, so its memory is not handed back to the
copy stream while fn still reads it.
"""

from __future__ import annotations

import torch


def overlapped_map(fn, batches: list[torch.Tensor], device: torch.device) -> list[torch.Tensor]:
    """[fn(b.to(device)) for b in batches], the copy of batch i + 1 running while fn computes on batch i."""
    compute = torch.cuda.current_stream(device)
    copy = torch.cuda.Stream(device)

    def load(batch: torch.Tensor) -> tuple[torch.Tensor, torch.cuda.Event]:
        with torch.cuda.stream(copy):
            on_device = batch.to(device, non_blocking=True)
            ready = torch.cuda.Event()
            ready.record(copy)
        return on_device, ready

    outputs = []
    ahead = load(batches[0]) if batches else None
    for i in range(len(batches)):
        x, ready = ahead
        if i + 1 < len(batches):
            ahead = load(batches[i + 1])  # enqueued now: copied while fn computes on x
        compute.wait_event(ready)
        x.record_stream(compute)
        outputs.append(fn(x))
    return outputs
