"""Checks for padding_mask(lengths, max_len=None) -> bool (B, max_len), True at padding."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _collate_fn_helpers import expected_mask
from grader.judge import call, candidate_raises, expect_equal

lengths_lists = st.lists(st.integers(0, 7), min_size=1, max_size=6)


def _mask(sandbox, lengths: list[int], max_len=None):
    kwargs = {} if max_len is None else {"max_len": max_len}
    return call(sandbox, "mask", torch.tensor(lengths, dtype=torch.int64), **kwargs)["mask"]


def _check(actual, lengths: list[int], max_len=None) -> None:
    expected = expected_mask(torch.tensor(lengths, dtype=torch.int64), max_len)
    what = f"padding_mask({lengths}" + ("" if max_len is None else f", max_len={max_len}") + ")"
    expect_equal(actual, expected, name=what, note="True where t >= lengths[i], i.e. at padding")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "mask[i, t] is True where t >= lengths[i] (padding), False on real positions; without "
    "max_len the width is lengths.max(). Return a bool tensor."
)
@given(lengths=lengths_lists)
@example(lengths=[1, 3, 0, 2])
@example(lengths=[4])
@example(lengths=[0, 0])
def test_mask_default_max_len(sandbox, lengths):
    """padding_mask: Bool (B, lengths.max()), True exactly at padding"""
    _check(_mask(sandbox, lengths), lengths)


@pytest.mark.points(1)
@given(lengths=lengths_lists, extra=st.integers(0, 3))
@example(lengths=[2, 5, 1], extra=2)
@example(lengths=[3, 1], extra=0)
@example(lengths=[0, 0, 0], extra=3)
def test_mask_explicit_max_len(sandbox, lengths, extra):
    """padding_mask: An explicit max_len >= lengths.max() sets the width"""
    max_len = max(lengths) + extra
    _check(_mask(sandbox, lengths, max_len), lengths, max_len)


@pytest.mark.points(1)
def test_mask_rejects_short_max_len(sandbox):
    """padding_mask: ValueError naming max_len when max_len < lengths.max()"""
    for lengths, max_len in (([3, 5, 1], 4), ([2], 0), ([1, 1], 0)):
        with candidate_raises("ValueError", match="max_len", what=f"padding_mask({lengths}, max_len={max_len})"):
            _mask(sandbox, lengths, max_len)
