"""Variant (written from the README alone): validation up front in one pass over the kept samples, a buffer
made with Tensor.new_full from the first sequence (so the dtype is the data's, and the padding value converts
as torch.full does), and each row filled with narrow(...).copy_; the mask from a broadcast comparison."""

from __future__ import annotations

import torch


def collate_fn(batch, padding_value=0):
    samples = [s for s in batch if s is not None]
    if not samples:
        raise ValueError("the batch has no sample left to collate")
    first = samples[0][0]
    for seq, _ in samples[1:]:
        if seq.shape[1:] != first.shape[1:]:
            raise ValueError(f"trailing shape mismatch: {tuple(seq.shape[1:])} vs {tuple(first.shape[1:])}")
        if seq.dtype != first.dtype:
            raise ValueError(f"dtype mismatch: {seq.dtype} vs {first.dtype}")
    lengths = [seq.shape[0] for seq, _ in samples]
    padded = first.new_full((len(samples), max(lengths), *first.shape[1:]), padding_value)
    for row, (seq, _) in enumerate(samples):
        padded[row].narrow(0, 0, seq.shape[0]).copy_(seq)
    labels = torch.tensor([int(label) for _, label in samples], dtype=torch.int64)
    return padded, torch.tensor(lengths, dtype=torch.int64), labels


def padding_mask(lengths, max_len=None):
    longest = int(lengths.max())
    if max_len is None:
        max_len = longest
    elif max_len < longest:
        raise ValueError(f"max_len={max_len} is shorter than the longest sequence ({longest})")
    positions = torch.arange(max_len, device=lengths.device)
    return positions[None, :] >= lengths[:, None]
