"""Mutant: copies each batch when it is needed and calls torch.cuda.synchronize() after every fn "to be safe":
the host waits for each batch's copy and compute before it issues the next copy, so the GPU never has a copy
and a kernel in flight together.

The values and the streams are right. Should be caught by test_copies_overlap_fn.
"""

import torch


def overlapped_map(fn, batches, device):
    compute = torch.cuda.current_stream(device)
    copy = torch.cuda.Stream(device)
    outputs = []
    for batch in batches:
        with torch.cuda.stream(copy):
            x = batch.to(device, non_blocking=True)
        compute.wait_stream(copy)
        outputs.append(fn(x))
        torch.cuda.synchronize(device)
    return outputs
