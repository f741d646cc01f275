"""Mutant: takes the batches off the caller's list with pop(0) as it prefetches them: the pipeline is right,
and the caller's list is empty afterwards.

Should be caught by test_batches_are_left_as_they_were.
"""

import torch


def overlapped_map(fn, batches, device):
    compute = torch.cuda.current_stream(device)
    copy = torch.cuda.Stream(device)

    def load(batch):
        with torch.cuda.stream(copy):
            x = batch.to(device, non_blocking=True)
            ready = torch.cuda.Event()
            ready.record(copy)
        return x, ready

    outputs = []
    ahead = load(batches.pop(0)) if batches else None
    while ahead is not None:
        x, ready = ahead
        ahead = load(batches.pop(0)) if batches else None
        compute.wait_event(ready)
        x.record_stream(compute)
        outputs.append(fn(x))
    return outputs
