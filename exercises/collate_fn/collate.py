"""Collate variable-length sequences: implement the two functions below. See README.md.

No API is forbidden here: torch.nn.utils.rnn.pad_sequence, torch.nn.functional.pad and
anything else in PyTorch are fine.
"""

from __future__ import annotations

import torch
from torch import Tensor


def collate_fn(batch, padding_value=0) -> tuple[Tensor, Tensor, Tensor]:
    """Pad a list of (sequence, label) samples into one batch.

    Args:
        batch: a list of samples. A sample is a pair (sequence, label), where
            sequence is a tensor of shape (T_i, *F) with T_i >= 0 (zero-length
            sequences are allowed) and label is an int or a 0-d integer tensor.
            Every sequence has the same trailing shape *F and the same dtype.
            A sample that is None (a record that failed to load) is skipped.
        padding_value: the value written at every padded position, converted to
            the sequences' dtype as torch.full(..., padding_value, dtype=that
            dtype) would.

    Returns:
        (padded, lengths, labels):
        padded: (B, T_max, *F) in the sequences' dtype, sample i in row i (input
            order, None samples removed), padded[i, t] == padding_value for
            every t >= lengths[i];
        lengths: int64 tensor (B,), each sequence's T_i;
        labels: int64 tensor (B,).

    Raises:
        ValueError: no sample is left (message contains "batch"), trailing
            shapes differ (message contains "shape"), or dtypes differ (message
            contains "dtype").
    """
    raise NotImplementedError("collate_fn")


def padding_mask(lengths: Tensor, max_len: int | None = None) -> Tensor:
    """Bool mask (B, max_len) that is True where a position is padding.

    Args:
        lengths: int64 tensor (B,), e.g. the lengths collate_fn returns.
        max_len: the mask's width; defaults to lengths.max().

    Returns:
        mask[i, t] is True exactly when t >= lengths[i].

    Raises:
        ValueError: max_len < lengths.max() (message contains "max_len").
    """
    raise NotImplementedError("padding_mask")
