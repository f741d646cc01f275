"""Mutant: Builds labels with torch.tensor(list of labels): 0-d int32/uint8 label
tensors keep their dtype instead of becoming int64.

Should be caught by: test_collate_labels.
"""

from __future__ import annotations

import torch
from torch import Tensor


def collate_fn(batch, padding_value=0) -> tuple[Tensor, Tensor, Tensor]:
    """Pad (sequence, label) samples into (padded (B, T_max, *F), lengths (B,), labels (B,))."""
    samples = [sample for sample in batch if sample is not None]
    if not samples:
        raise ValueError("batch has no sample left after skipping None samples")
    sequences = [torch.as_tensor(sequence) for sequence, _ in samples]
    first = sequences[0]
    for i, sequence in enumerate(sequences):
        if sequence.dim() < 1:
            raise ValueError(f"sequence {i} in the batch is 0-d; expected shape (T, *F)")
        if sequence.shape[1:] != first.shape[1:]:
            raise ValueError(
                f"sequences in the batch have different trailing shapes: "
                f"{tuple(first.shape[1:])} and {tuple(sequence.shape[1:])}"
            )
        if sequence.dtype != first.dtype:
            raise ValueError(
                f"sequences in the batch have different dtypes: {first.dtype} and {sequence.dtype}"
            )
    lengths = torch.tensor([s.shape[0] for s in sequences], dtype=torch.int64)
    labels = torch.tensor([label for _, label in samples])
    t_max = int(lengths.max())
    padded = first.new_full((len(sequences), t_max, *first.shape[1:]), padding_value)
    for i, sequence in enumerate(sequences):
        padded[i, : sequence.shape[0]] = sequence
    return padded, lengths, labels


def padding_mask(lengths: Tensor, max_len: int | None = None) -> Tensor:
    """Bool (B, max_len): True where position t >= lengths[i] (padding)."""
    longest = int(lengths.max())
    if max_len is None:
        max_len = longest
    elif max_len < longest:
        raise ValueError(f"max_len={max_len} is shorter than the longest length {longest}")
    positions = torch.arange(max_len, device=lengths.device)
    return positions.unsqueeze(0) >= lengths.unsqueeze(1)
