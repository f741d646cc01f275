"""Example tests for the collate_fn exercise. Run: pytest exercises/collate_fn/test_collate_fn_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import pytest
import torch
from torch.utils.data import DataLoader

from collate import collate_fn, padding_mask


def test_pads_1d_sequences_in_input_order():
    batch = [
        (torch.tensor([1.0, 2.0]), 0),
        (torch.tensor([3.0, 4.0, 5.0]), torch.tensor(1)),  # a label may be a 0-d tensor
        (torch.tensor([6.0]), 2),
    ]

    padded, lengths, labels = collate_fn(batch)

    expected = torch.tensor([[1.0, 2.0, 0.0], [3.0, 4.0, 5.0], [6.0, 0.0, 0.0]])
    torch.testing.assert_close(padded, expected)  # float32 in, float32 out
    assert lengths.dtype == torch.int64 and lengths.tolist() == [2, 3, 1]
    assert labels.dtype == torch.int64 and labels.tolist() == [0, 1, 2]


def test_feature_dims_none_samples_and_padding_value():
    a = torch.arange(6).reshape(3, 2)  # (T=3, F=2), int64
    b = torch.arange(2).reshape(1, 2)  # (T=1, F=2)
    empty = torch.empty(0, 2, dtype=torch.int64)  # a zero-length sequence is a real sample
    batch = [None, (a, 7), (empty, 8), None, (b, 9)]

    padded, lengths, labels = collate_fn(batch, padding_value=-1)

    assert padded.shape == (3, 3, 2) and padded.dtype == torch.int64
    assert torch.equal(padded[0], a)
    assert (padded[1] == -1).all()
    assert torch.equal(padded[2, :1], b) and (padded[2, 1:] == -1).all()
    assert lengths.tolist() == [3, 0, 1]
    assert labels.tolist() == [7, 8, 9]


def test_errors():
    with pytest.raises(ValueError, match="batch"):
        collate_fn([None, None])
    with pytest.raises(ValueError, match="shape"):
        collate_fn([(torch.zeros(2, 3), 0), (torch.zeros(2, 4), 1)])
    with pytest.raises(ValueError, match="dtype"):
        collate_fn([(torch.zeros(2), 0), (torch.zeros(2, dtype=torch.float64), 1)])
    with pytest.raises(ValueError, match="max_len"):
        padding_mask(torch.tensor([3, 5]), max_len=4)


def test_padding_mask():
    lengths = torch.tensor([2, 0, 3])

    mask = padding_mask(lengths)

    expected = torch.tensor([[False, False, True], [True, True, True], [False, False, False]])
    assert mask.dtype == torch.bool and torch.equal(mask, expected)
    assert padding_mask(lengths, max_len=5)[:, 3:].all()  # extra columns are padding


def test_works_in_a_dataloader_with_workers():
    samples = [(torch.randn(t, 4), t % 3) for t in (5, 2, 7, 1, 3)]  # a list is a map-style dataset
    loader = DataLoader(samples, batch_size=2, collate_fn=collate_fn, num_workers=2)

    shapes = [tuple(padded.shape) for padded, _, _ in loader]

    assert shapes == [(2, 5, 4), (2, 7, 4), (1, 3, 4)]
