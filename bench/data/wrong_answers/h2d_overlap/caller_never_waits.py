"""The caller's stream never waits for the copy: fn can read a batch that is still being copied.

Recorded as: fn_reads_before_the_copy_finished
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
        buffer.record_stream(caller)
        outputs.append(fn(buffer))
        current = upcoming
    return outputs
