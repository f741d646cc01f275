"""Correct variant: torch.nn.utils.rnn.pad_sequence does the padding.

pad_sequence silently promotes mixed dtypes, so the dtypes are checked first.
Labels are stacked from 0-d int64 tensors; the mask compares an expanded
arange with the lengths. Must get full marks.
"""

import torch
from torch.nn.utils.rnn import pad_sequence


def collate_fn(batch, padding_value=0):
    batch = [b for b in batch if b is not None]
    if len(batch) == 0:
        raise ValueError("empty batch: every sample was None")
    seqs, labels = zip(*batch)
    feature_shape = seqs[0].shape[1:]
    if any(s.shape[1:] != feature_shape for s in seqs):
        raise ValueError(f"trailing shape mismatch in batch: {[tuple(s.shape) for s in seqs]}")
    if len({s.dtype for s in seqs}) != 1:
        raise ValueError(f"dtype mismatch in batch: {sorted({str(s.dtype) for s in seqs})}")
    padded = pad_sequence(list(seqs), batch_first=True, padding_value=padding_value)
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    labels = torch.stack([torch.as_tensor(y).to(torch.long).reshape(()) for y in labels])
    return padded, lengths, labels


def padding_mask(lengths, max_len=None):
    if max_len is None:
        max_len = lengths.max().item()
    if max_len < lengths.max().item():
        raise ValueError("max_len must be at least the longest length")
    B = lengths.shape[0]
    return torch.arange(max_len).expand(B, max_len) >= lengths.unsqueeze(-1)
