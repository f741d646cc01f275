"""Variant: inverse-CDF sampling (torch.rand + torch.searchsorted on the cumulative weights),
a generator seeded with a hash of (seed, epoch), shards taken with an explicit loop."""

from __future__ import annotations

import math

import torch


class WeightedShardedSampler(torch.utils.data.Sampler[int]):
    def __init__(self, labels, class_weights=None, num_replicas=1, rank=0, seed=0, num_samples=None):
        labels = list(labels)
        if len(labels) == 0:
            raise ValueError("labels is empty")
        if num_replicas < 1:
            raise ValueError("num_replicas must be at least 1")
        if rank < 0 or rank >= num_replicas:
            raise ValueError(f"rank {rank} out of range for {num_replicas} replicas")
        total_wanted = len(labels) if num_samples is None else num_samples
        if total_wanted < num_replicas:
            raise ValueError("num_samples smaller than num_replicas")
        if class_weights is not None:
            for c, w in class_weights.items():
                if math.isnan(w) or math.isinf(w) or w < 0:
                    raise ValueError(f"bad weight {w!r} for class {c!r}")
        classes = sorted(set(labels))
        if class_weights is None:
            class_weights = dict.fromkeys(classes, 1)
        for c in classes:
            if c not in class_weights:
                raise ValueError(f"label {c} has no entry in class_weights")
        y = torch.tensor(labels)
        w = torch.zeros(len(labels), dtype=torch.float64)
        for c in classes:
            members = y == c
            w[members] = class_weights[c] / members.sum().item()
        if w.sum().item() == 0:
            raise ValueError("all weights are zero")
        self._cdf = torch.cumsum(w, 0)
        self._last = int(w.nonzero().max())  # rounding must never pick a trailing weight-0 index
        self._R, self._r, self._seed = num_replicas, rank, seed
        self._per = total_wanted // num_replicas
        self._epoch = 0

    def set_epoch(self, epoch):
        self._epoch = epoch

    def __len__(self):
        return self._per

    def __iter__(self):
        g = torch.Generator()
        g.manual_seed((self._seed * 1_000_003 + self._epoch) % (2**63))
        u = torch.rand(self._per * self._R, generator=g, dtype=torch.float64) * self._cdf[-1]
        draw = torch.searchsorted(self._cdf, u, right=True).clamp_(max=self._last)
        mine = [int(draw[i]) for i in range(self._r, len(draw), self._R)]
        yield from mine
