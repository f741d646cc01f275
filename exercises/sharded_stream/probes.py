"""Probes for the sharded_stream exercise. They run INSIDE the sandbox.

They build one candidate ``ShardedStream`` per simulated rank (no process group), call
``set_epoch`` on each before an epoch starts, and read every rank's instance through a
fresh ``DataLoader`` iterator with 0, 2 or 3 worker processes. A wrapper dataset,
``Tagged``, runs inside each worker (so the candidate's ``get_worker_info()`` sees the real
worker) and tags every record with its rank and worker id. What comes back is plain data,
never a verdict: the checks decide.

``Tagged`` lives here, at module level, so that DataLoader workers can reach it by name
whatever the start method: the worker puts this folder and the candidate's on sys.path.
"""

from __future__ import annotations

import random
import warnings

import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

import sharded_stream

#: Seconds a DataLoader waits for one item from a worker before raising, well inside the
#: sandbox's per-call deadline, so a stuck worker is an error with a reason.
LOADER_TIMEOUT_S = 10


class Tagged(IterableDataset):
    """Reads every rank's instance in turn; yields (rank, worker id, record or -1, type name)."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        info = get_worker_info()
        worker = 0 if info is None else info.id
        for rank, dataset in enumerate(self.datasets):
            for record in dataset:
                if type(record) is int:
                    yield rank, worker, record, "int"
                else:  # not what the contract promised: its type goes back, never the object
                    yield rank, worker, -1, type(record).__name__


def _build(shards, world_size, seed):
    kwargs = {} if seed is None else {"seed": seed}
    if world_size is None:  # rank and world_size left to the signature's defaults (0 and 1)
        return [sharded_stream.ShardedStream([list(s) for s in shards], **kwargs)]
    return [sharded_stream.ShardedStream([list(s) for s in shards], rank=r, world_size=world_size, **kwargs)
            for r in range(world_size)]


def _one_pass(datasets, num_workers: int) -> dict:
    with warnings.catch_warnings():  # "3 workers on a 2-CPU machine": the checks mean it
        warnings.simplefilter("ignore", UserWarning)
        loader = DataLoader(Tagged(datasets), batch_size=None, num_workers=num_workers,
                            timeout=LOADER_TIMEOUT_S if num_workers else 0,
                            multiprocessing_context="fork" if num_workers else None)
        items = list(loader)
    rows = [[int(rank), int(worker), int(record)] for rank, worker, record, _ in items]
    return {"rows": torch.tensor(rows, dtype=torch.int64).reshape(len(rows), 3),
            "types": sorted({str(name) for *_, name in items})}


def stream(shards, world_size, num_workers, epochs, seed=None, rng_salt=0):
    """One ShardedStream per rank r (rank=r, world_size, seed; seed left out when None; one instance
    with neither rank nor world_size when world_size is None), then for
    each entry e of epochs: set_epoch(e) on every instance (not called when e is None), the global
    torch and random RNGs reseeded from rng_salt and the pass number, and one pass of a fresh
    DataLoader(Tagged(instances), batch_size=None, num_workers=num_workers) iterator.

    Returns one {"rows": int64 [n, 3] of (rank, worker id, record), "types": sorted type names of
    what was yielded} per entry of epochs, in order.
    """
    datasets = _build(shards, world_size, seed)
    passes = []
    for k, epoch in enumerate(epochs):
        if epoch is not None:
            for dataset in datasets:
                dataset.set_epoch(epoch)
        torch.manual_seed(7919 * rng_salt + 104729 * k + 1)
        random.seed(7919 * rng_salt + 104729 * k + 2)
        passes.append(_one_pass(datasets, num_workers))
    return passes


def init(shards, **kwargs):
    """Only construct the dataset (for the error checks)."""
    sharded_stream.ShardedStream([list(s) for s in shards], **kwargs)
    return "constructed"
