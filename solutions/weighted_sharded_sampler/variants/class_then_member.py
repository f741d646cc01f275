"""Variant: two-stage draw, first a class by its weight, then a member of that class uniformly;
numpy-free, with torch.randint for the member and a generator seeded with seed + 7919 * epoch."""

from __future__ import annotations

import math
from collections import defaultdict

import torch


class WeightedShardedSampler(torch.utils.data.Sampler[int]):
    def __init__(self, labels, class_weights=None, num_replicas=1, rank=0, seed=0, num_samples=None):
        members = defaultdict(list)
        for i, y in enumerate(labels):
            members[int(y)].append(i)
        if not members:
            raise ValueError("labels must hold at least one label")
        if num_replicas < 1 or not isinstance(num_replicas, int):
            raise ValueError(f"num_replicas={num_replicas!r} is invalid")
        if not (0 <= rank < num_replicas):
            raise ValueError(f"rank={rank!r} is not in [0, num_replicas)")
        n = len(labels) if num_samples is None else int(num_samples)
        if n < num_replicas:
            raise ValueError(f"num_samples={n} leaves a rank without samples")
        weights = {c: 1.0 for c in members} if class_weights is None else dict(class_weights)
        if any(not (math.isfinite(w) and w >= 0) for w in weights.values()):
            raise ValueError(f"class weights must be finite and non-negative: {weights}")
        for c in members:
            if c not in weights:
                raise ValueError(f"label {c} has no class weight")
        self.classes = sorted(members)
        self.class_p = torch.tensor([float(weights[c]) for c in self.classes], dtype=torch.float64)
        if self.class_p.sum() == 0:
            raise ValueError("the class weights of the labels present are all 0")
        self.members = [torch.tensor(members[c]) for c in self.classes]
        self.replicas, self.rank, self.seed = num_replicas, rank, seed
        self.count = n // num_replicas
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = int(epoch)

    def __len__(self):
        return self.count

    def _global(self):
        g = torch.Generator().manual_seed(self.seed + 7919 * self.epoch)
        total = self.count * self.replicas
        which = torch.multinomial(self.class_p, total, replacement=True, generator=g)
        out = torch.empty(total, dtype=torch.int64)
        for k, idx in enumerate(self.members):
            at = which == k
            out[at] = idx[torch.randint(len(idx), (int(at.sum()),), generator=g)]
        return out

    def __iter__(self):
        draw = self._global()
        return (int(i) for i in draw[self.rank::self.replicas])
