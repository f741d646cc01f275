"""The caller's stream waits for every copy but the first: fn may read batch 0 before it has arrived.

Recorded as: first_batch_not_awaited
"""

from __future__ import annotations

import torch


def _staged(batches, device, copy_stream):
    for batch in batches:
        with torch.cuda.stream(copy_stream):
            buffer = torch.empty(batch.shape, dtype=batch.dtype, device=device)
            buffer.copy_(batch, non_blocking=True)
            done = copy_stream.record_event()
        yield buffer, done


def overlapped_map(fn, batches, device):
    caller = torch.cuda.current_stream(device)
    staged = _staged(batches, device, torch.cuda.Stream(device))
    outputs = []
    current = next(staged, None)
    while current is not None:
        upcoming = next(staged, None)  # its copy is enqueued before fn runs on the current batch
        buffer, done = current
        if outputs:
            caller.wait_event(done)
        buffer.record_stream(caller)
        outputs.append(fn(buffer))
        current = upcoming
    return outputs
