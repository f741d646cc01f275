"""Probes for the collate_fn exercise. They run INSIDE the sandbox.

Each probe takes plain data (lists and tuples of CPU tensors and ints, None for a
sample that failed to load), runs the candidate's code and returns plain data.
Probes never judge anything: the hidden checks (judge side) compute the expected
batch themselves and compare.

``SampleDataset`` lives here, at module level, so that DataLoader worker processes
can reach it by name (``probes.SampleDataset``) whatever the start method: the
worker puts this folder and the candidate's on sys.path.
"""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader, Dataset

import collate
from grader.sandbox import probekit
from grader.sandbox.probekit import tensor as _plain

#: Seconds a DataLoader waits for one batch from a worker before raising, well
#: inside the sandbox's per-call deadline, so a stuck worker is an error with a reason.
LOADER_TIMEOUT_S = 10


def _triple(result) -> dict:
    """{"padded", "lengths", "labels"} from what collate_fn returned, or why it is not a triple."""
    if isinstance(result, (tuple, list)) and len(result) == 3:
        padded, lengths, labels = result
        return {"padded": _plain(padded), "lengths": _plain(lengths), "labels": _plain(labels)}
    return probekit.returned_instead(result)


def collate_batch(batch, **kwargs):
    """collate_fn(batch) or, with padding_value given, collate_fn(batch, padding_value=...)."""
    return _triple(collate.collate_fn(batch, **kwargs))


def mask(lengths, **kwargs):
    """padding_mask(lengths) or, with max_len given, padding_mask(lengths, max_len=...)."""
    return {"mask": _plain(collate.padding_mask(lengths, **kwargs))}


class SampleDataset(Dataset):
    """A map-style dataset over fixed samples; a None item is a record that failed to load."""

    def __init__(self, samples):
        self.samples = list(samples)

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        return self.samples[index]


def loader_batches(samples, batch_size, num_workers=2):
    """Iterate DataLoader(SampleDataset(samples), batch_size, num_workers, collate_fn=collate_fn).

    Returns one triple per batch, in the order the loader yields them.
    """
    loader = DataLoader(
        SampleDataset(samples),
        batch_size=batch_size,
        shuffle=False,
        num_workers=num_workers,
        collate_fn=collate.collate_fn,
        timeout=LOADER_TIMEOUT_S if num_workers > 0 else 0,
    )
    return [_triple(result) for result in loader]
