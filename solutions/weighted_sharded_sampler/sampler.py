"""Reference: per-index weights w[c] / count[c], one torch.multinomial draw per (seed, epoch)
with a private generator, strided shards."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence

import torch


class WeightedShardedSampler(torch.utils.data.Sampler[int]):
    """Draws indices with replacement so that class c comes up with frequency w[c] / sum(w),
    then gives rank r the positions r, r + R, ... of that one global draw."""

    def __init__(self, labels: Sequence[int], class_weights: dict[int, float] | None = None,
                 num_replicas: int = 1, rank: int = 0, seed: int = 0, num_samples: int | None = None):
        labels = [int(label) for label in labels]
        if not labels:
            raise ValueError("labels must not be empty")
        if num_replicas < 1:
            raise ValueError(f"num_replicas must be >= 1, got {num_replicas}")
        if not 0 <= rank < num_replicas:
            raise ValueError(f"rank must be in [0, {num_replicas}), got {rank}")
        if num_samples is None:
            num_samples = len(labels)
        if num_samples < num_replicas:
            raise ValueError(f"num_samples ({num_samples}) must be >= num_replicas ({num_replicas})")
        counts = Counter(labels)
        if class_weights is None:
            class_weights = {c: 1.0 for c in counts}
        for c, w in class_weights.items():
            if not math.isfinite(w) or w < 0:
                raise ValueError(f"the weight of class {c} must be finite and >= 0, got {w}")
        missing = sorted(set(counts) - set(class_weights))
        if missing:
            raise ValueError(f"no weight in class_weights for label(s) {missing}")
        # Why divide by the count: the weight is the class's share, spread over its indices.
        self.weights = torch.tensor([class_weights[y] / counts[y] for y in labels], dtype=torch.float64)
        if not self.weights.sum() > 0:
            raise ValueError("every class present in labels has weight 0: nothing to draw")
        self.num_replicas, self.rank, self.seed = num_replicas, rank, seed
        self.per_rank = num_samples // num_replicas
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self) -> Iterator[int]:
        # A fresh generator per iteration: the same (seed, epoch) gives the same draw on every rank.
        g = torch.Generator().manual_seed(self.seed + self.epoch)
        total = self.per_rank * self.num_replicas
        draw = torch.multinomial(self.weights, total, replacement=True, generator=g)
        return iter(draw[self.rank::self.num_replicas].tolist())

    def __len__(self) -> int:
        return self.per_rank
