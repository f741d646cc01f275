"""Variant (written from the README alone): the global draw by the Gumbel-max trick (argmax over log P plus
Gumbel noise from the sampler's own generator, one row of noise per draw), class counts from
collections.Counter, validation with math.isfinite, and the generator seeded with (seed, epoch) folded into one
integer."""

from __future__ import annotations

import math
from collections import Counter

import torch
from torch.utils.data import Sampler


class WeightedShardedSampler(Sampler):
    def __init__(self, labels, class_weights=None, num_replicas=1, rank=0, seed=0, num_samples=None):
        labels = [int(x) for x in labels]
        if not labels:
            raise ValueError("labels must not be empty")
        if num_replicas < 1:
            raise ValueError(f"num_replicas must be >= 1, got {num_replicas}")
        if not 0 <= rank < num_replicas:
            raise ValueError(f"rank {rank} is outside [0, num_replicas={num_replicas})")
        num_samples = len(labels) if num_samples is None else num_samples
        if num_samples < num_replicas:
            raise ValueError(f"num_samples={num_samples} is smaller than num_replicas={num_replicas}")
        counts = Counter(labels)
        if class_weights is None:
            class_weights = {c: 1.0 for c in counts}
        for c, w in class_weights.items():
            if not math.isfinite(w) or w < 0:
                raise ValueError(f"class {c} has an invalid weight {w}")
        for c in counts:
            if c not in class_weights:
                raise ValueError(f"label {c} has no weight in class_weights")
        if sum(class_weights[c] for c in counts) == 0:
            raise ValueError("every class present has weight 0")
        per_index = torch.tensor([class_weights[c] / counts[c] for c in labels], dtype=torch.float64)
        self.log_p = torch.log(per_index)  # -inf for weight 0: never the argmax
        self.num_replicas, self.rank, self.seed = num_replicas, rank, seed
        self.per_rank = num_samples // num_replicas
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __len__(self):
        return self.per_rank

    def __iter__(self):
        total = self.per_rank * self.num_replicas
        g = torch.Generator().manual_seed(self.seed * 100_003 + self.epoch)
        u = torch.rand(total, self.log_p.numel(), generator=g, dtype=torch.float64).clamp_min(1e-300)
        draw = torch.argmax(self.log_p - torch.log(-torch.log(u)), dim=1).tolist()
        return iter(draw[self.rank::self.num_replicas])
