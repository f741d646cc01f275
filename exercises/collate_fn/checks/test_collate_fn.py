"""Checks for collate_fn(batch, padding_value=0) -> (padded, lengths, labels)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _collate_fn_helpers import (
    BatchCase,
    batch_cases,
    check_batch,
    expected_batch,
    padding_values_for,
    run_collate,
    triple,
)
from grader.judge import candidate_raises, expect_tensor

# Covered first on every run. Lengths out of order (sorting by length cannot hide),
# a zero-length sequence in the middle, and a single sample.
UNSORTED = BatchCase(lengths=(1, 3, 0, 2), seed=1)
SINGLE = BatchCase(lengths=(4,), labels=(9,), seed=2)
UNSORTED_FEATURES = BatchCase(lengths=(2, 5, 1), features=(3,), seed=3)
TWO_FEATURE_DIMS = BatchCase(lengths=(3, 1, 2), features=(2, 3), seed=4)
SINGLE_FEATURES = BatchCase(lengths=(3,), features=(2, 1), seed=5)


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "padded is (B, T_max, *F) in the sequences' dtype, where T_max is the longest length and *F "
    "the trailing shape the sequences share; lengths and labels are int64 tensors of shape (B,)."
)
@given(case=batch_cases(dtypes=("float32", "float64", "int64"), feature_dims=(0, 2)))
@example(case=UNSORTED)
@example(case=TWO_FEATURE_DIMS)
def test_collate_shapes_and_dtypes(sandbox, case):
    """collate_fn: Returns (padded, lengths, labels) of the right shapes and dtypes"""
    result = run_collate(sandbox, case)
    padded, _, _ = expected_batch(case)
    where = f" ({case.describe()})"
    expect_tensor(result["padded"], shape=tuple(padded.shape), dtype=padded.dtype, name=f"padded{where}")
    expect_tensor(result["lengths"], shape=(case.B,), dtype=torch.int64, name=f"lengths{where}")
    expect_tensor(result["labels"], shape=(case.B,), dtype=torch.int64, name=f"labels{where}")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Row i holds sample i in the order given (do not sort by length), its data first and the "
    "padding value after it; lengths[i] is its length and labels[i] its label."
)
@given(case=batch_cases(min_len=1))
@example(case=UNSORTED)
@example(case=SINGLE)
def test_collate_1d_sequences(sandbox, case):
    """collate_fn: 1-D sequences: padded with 0 by default, input order kept"""
    check_batch(run_collate(sandbox, case), case)


@pytest.mark.points(2)
@given(case=batch_cases(feature_dims=(1, 2)))
@example(case=UNSORTED_FEATURES)
@example(case=TWO_FEATURE_DIMS)
@example(case=SINGLE_FEATURES)
def test_collate_feature_dims(sandbox, case):
    """collate_fn: Sequences with trailing feature dims (T, *F)"""
    check_batch(run_collate(sandbox, case), case)


@pytest.mark.points(1)
@given(case=batch_cases(dtypes=("float64", "int64"), feature_dims=(0, 1)))
@example(case=BatchCase(lengths=(2, 4, 1), dtype="int64", seed=6))
@example(case=BatchCase(lengths=(3, 1), features=(2,), dtype="float64", seed=7))
def test_collate_dtypes(sandbox, case):
    """collate_fn: float64 and int64 sequences keep their dtype and values"""
    check_batch(run_collate(sandbox, case), case)


@pytest.mark.points(2)
@given(
    case=batch_cases(dtypes=("float32", "float64", "int64"), feature_dims=(0, 2)),
    data=st.data(),
)
@example(case=UNSORTED, data=None).via("padding_value=-1 and 0.5, float32")
def test_collate_padding_value(sandbox, case, data):
    """collate_fn: padding_value fills every position at or beyond each length"""
    if data is None:
        values = [-1, 0.5]
    else:
        values = [data.draw(padding_values_for(case.dtype), label="padding_value")]
    for value in values:
        check_batch(run_collate(sandbox, case, value), case, value,
                    what=f"{case.describe()}, padding_value={value!r}")


@pytest.mark.points(1)
def test_collate_float_padding_value_int_data(sandbox):
    """collate_fn: A float padding_value with int64 sequences is converted to int64"""
    case = BatchCase(lengths=(1, 3, 2), features=(2,), dtype="int64", seed=8)
    for value in (-2.5, 0.5, 3.75):
        expected = int(value)  # torch.full's conversion: truncation toward zero
        check_batch(run_collate(sandbox, case, value), case, value,
                    what=f"int64 sequences, padding_value={value!r} -> {expected}")


ALL_EMPTY = BatchCase(lengths=(0, 0, 0), seed=9)
ALL_EMPTY_FEATURES = BatchCase(lengths=(0, 0), features=(3,), seed=10)
ONE_EMPTY = BatchCase(lengths=(0,), features=(2, 2), seed=11)
EMPTY_FIRST = BatchCase(lengths=(0, 2, 0, 1), features=(2,), seed=12)


@pytest.mark.points(2)
@given(case=batch_cases(feature_dims=(0, 2), max_len=2))
@example(case=ALL_EMPTY)
@example(case=ALL_EMPTY_FEATURES)
@example(case=ONE_EMPTY)
@example(case=EMPTY_FIRST)
def test_collate_zero_length(sandbox, case):
    """collate_fn: Zero-length sequences, including batches where every sequence is empty"""
    check_batch(run_collate(sandbox, case), case)


@pytest.mark.points(2)
@given(case=batch_cases(feature_dims=(0, 1), nones=True))
@example(case=BatchCase(lengths=(2, 3), none_at=(0, 2), seed=13))
@example(case=BatchCase(lengths=(1, 4, 2), none_at=(3, 4), seed=14))
def test_collate_skips_none(sandbox, case):
    """collate_fn: None samples are skipped; the others keep their order"""
    check_batch(run_collate(sandbox, case), case)


@pytest.mark.points(1)
@given(
    case=batch_cases(
        feature_dims=(0, 1),
        label_kinds=("int", "int64", "int32", "int16", "uint8"),
        mixed_labels=True,
    )
)
@example(case=BatchCase(lengths=(2, 1), labels=(7, 2**33), label_kinds=("int32", "int"), seed=15))
@example(case=BatchCase(lengths=(1, 2, 3), labels=(4, 0, 255), label_kinds=("uint8",) * 3, seed=16))
def test_collate_labels(sandbox, case):
    """collate_fn: Labels given as ints or 0-d integer tensors become one int64 tensor"""
    check_batch(run_collate(sandbox, case), case,
                what=f"{case.describe()}, labels {list(case.labels)} as {list(case.kinds())}")


# ------------------------------------------------------------------------- errors


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Skip the None samples first; if nothing is left, raise ValueError mentioning the batch.")
def test_collate_rejects_empty_batch(sandbox):
    """collate_fn: ValueError naming the batch when no sample is left"""
    for batch in ([], [None], [None, None, None]):
        with candidate_raises("ValueError", match=r"(?i)batch", what=f"collate_fn({batch})"):
            sandbox.call("collate_batch", batch)


def _sample(shape, dtype=torch.float32, label=0):
    return (torch.ones(shape, dtype=dtype), label)


@pytest.mark.points(1)
def test_collate_rejects_mismatched_trailing_shapes(sandbox):
    """collate_fn: ValueError naming the shape when trailing shapes differ"""
    batches = {
        "(3, 2) and (2, 3)": [_sample((3, 2)), _sample((2, 3))],
        "(2, 4), (1, 4) and (2, 5)": [_sample((2, 4)), _sample((1, 4)), _sample((2, 5))],
        "(3,) and (3, 1)": [_sample((3,)), _sample((3, 1))],
        "(2, 2, 3) and (2, 3, 2)": [_sample((2, 2, 3)), _sample((2, 3, 2))],
        "(1, 2), (1, 2) and (0, 3)": [_sample((1, 2)), _sample((1, 2)), _sample((0, 3))],
    }
    for shapes, batch in batches.items():
        with candidate_raises("ValueError", match=r"(?i)shape", what=f"sequences of shapes {shapes}"):
            sandbox.call("collate_batch", batch)


@pytest.mark.points(1)
def test_collate_rejects_mismatched_dtypes(sandbox):
    """collate_fn: ValueError naming the dtype when sequences' dtypes differ"""
    batches = {
        "float32 and float64": [_sample((2, 3)), _sample((3, 3), torch.float64)],
        "float32 and int64": [_sample((2,)), _sample((4,), torch.int64)],
        "int64, int64 and float32": [_sample((1, 2), torch.int64), _sample((3, 2), torch.int64),
                                     _sample((2, 2))],
    }
    for dtypes, batch in batches.items():
        with candidate_raises("ValueError", match=r"(?i)dtype", what=f"sequences of dtypes {dtypes}"):
            sandbox.call("collate_batch", batch)


# --------------------------------------------------------------------- DataLoader


@pytest.mark.points(2)
def test_collate_in_dataloader(sandbox):
    """collate_fn: Works as DataLoader(..., collate_fn=collate_fn) with num_workers=2

    One loader (batch_size=4, two worker processes) over a map-style dataset of 10
    samples: every batch must come back as collate_fn defines it, in order. (None
    samples and zero-length sequences have checks of their own.)
    """
    batch_size = 4
    per_batch = [  # what each batch of 4 samples holds; the last one is short
        BatchCase(lengths=(3, 1, 4, 2), features=(2,), labels=(10, 11, 12, 13), seed=17),
        BatchCase(lengths=(1, 2, 5, 1), features=(2,), labels=(14, 15, 16, 17),
                  label_kinds=("int", "int64", "int", "int64"), seed=18),
        BatchCase(lengths=(2, 3), features=(2,), labels=(18, 19), seed=19),
    ]
    samples = [s for case in per_batch for s in case.samples()]
    batches = sandbox.call("loader_batches", samples, batch_size, 2)
    if not isinstance(batches, list) or len(batches) != len(per_batch):
        got = len(batches) if isinstance(batches, list) else batches
        raise AssertionError(f"the DataLoader gave {got!r} batches, expected {len(per_batch)}")
    for k, (result, case) in enumerate(zip(batches, per_batch)):
        check_batch(triple(result), case, what=f"batch {k} of the DataLoader: {case.describe()}")
