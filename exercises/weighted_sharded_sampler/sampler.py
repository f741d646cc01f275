"""A class-weighted sampler sharded across ranks: implement the class below. See README.md."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import torch


class WeightedShardedSampler(torch.utils.data.Sampler[int]):
    """Draws indices with replacement, class frequencies following the weights, one global
    draw per (seed, epoch) split between ranks by stride.

    P(i) = w[labels[i]] / count[labels[i]] / Z (Z: sum of w over the classes present);
    default weights: 1 per class present (balanced). Each rank yields exactly
    num_samples // num_replicas Python ints: rank r gets global_draw[r::num_replicas] of a
    global draw of (num_samples // num_replicas) * num_replicas indices that depends only on
    labels, weights, seed, epoch and that total. Use a seeded torch.Generator, never the
    global RNG; iterating twice gives the same sequence.
    """

    def __init__(self, labels: Sequence[int], class_weights: dict[int, float] | None = None,
                 num_replicas: int = 1, rank: int = 0, seed: int = 0, num_samples: int | None = None):
        """ValueError (naming what is wrong) for: empty labels, num_replicas < 1, rank outside
        [0, num_replicas), num_samples < num_replicas, a negative/NaN/infinite weight
        ("weight"), a label with no weight (names the label), all present weights 0."""
        raise NotImplementedError("WeightedShardedSampler.__init__")

    def set_epoch(self, epoch: int) -> None:
        """The next iteration draws for (seed, epoch)."""
        raise NotImplementedError("WeightedShardedSampler.set_epoch")

    def __iter__(self) -> Iterator[int]:
        """This rank's share of the global draw: positions rank, rank + R, rank + 2R, ..."""
        raise NotImplementedError("WeightedShardedSampler.__iter__")

    def __len__(self) -> int:
        """num_samples // num_replicas."""
        raise NotImplementedError("WeightedShardedSampler.__len__")
