"""Variant: copies each next batch inside the loop, orders with Stream.wait_stream, keeps every device batch alive.

Written from the README alone. No events: before fn(i) the caller's stream waits for everything the
copy stream has enqueued so far (batch i and those before it); the copy of batch i + 1 is issued
after that wait, so fn(i) runs beside it. Instead of record_stream it holds a reference to every
device batch until the end, so the allocator cannot reuse one early.
"""

import torch


def overlapped_map(fn, batches, device):
    if not batches:
        return []
    caller = torch.cuda.current_stream(device)
    copier = torch.cuda.Stream(device)
    keep = []
    with torch.cuda.stream(copier):
        keep.append(batches[0].to(device, non_blocking=True))
    outs = []
    for i in range(len(batches)):
        caller.wait_stream(copier)  # batch i (and what was issued before) is on the device
        if i + 1 < len(batches):
            with torch.cuda.stream(copier):
                keep.append(batches[i + 1].to(device, non_blocking=True))
        outs.append(fn(keep[i]))
    return outs
