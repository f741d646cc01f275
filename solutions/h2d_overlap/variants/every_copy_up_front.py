"""Variant: enqueues every batch's copy on the side stream first, then runs fn on each after its own event.

Written from the README alone. All copies are issued before the first fn (the device memory of all
batches at once), each followed by an event; the caller's stream waits for event i before fn(i),
so fn(i) overlaps the copies of the batches after it.
"""

import torch


def overlapped_map(fn, batches, device):
    caller = torch.cuda.current_stream(device)
    side = torch.cuda.Stream(device=device)
    staged = []
    with torch.cuda.stream(side):
        for b in batches:
            x = torch.empty(b.shape, dtype=b.dtype, device=device)
            x.copy_(b, non_blocking=True)
            done = torch.cuda.Event()
            side.record_event(done)
            staged.append((x, done))
    results = []
    for x, done in staged:
        caller.wait_event(done)
        x.record_stream(caller)
        results.append(fn(x))
    return results
