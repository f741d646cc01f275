"""Judge-side helpers for the collate_fn checks: strategies, the expected batch, comparisons.

Everything here runs in the trusted judge. The expected batch is built with plain
torch (torch.full, then one slice copy per sample), so it never depends on the
candidate's code or on torch.nn.utils.rnn.

The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from hypothesis import strategies as st
from torch import Tensor

from grader.judge import call, expect_returned, expect_tensor, first_difference, seeds, shapes

DTYPES = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64}

#: Kinds a label may come as: a Python int, or a 0-d tensor of an integer dtype.
LABEL_DTYPES = {"int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "uint8": torch.uint8}
LABEL_RANGES = {
    "int": (-100, 10**6),
    "int64": (-100, 10**6),
    "int32": (-100, 10**6),
    "int16": (-100, 30_000),
    "uint8": (0, 255),
}

#: Padding values for integer sequences (exact in every dtype used here) ...
INT_PADDING = (0, -1, 1, 7, -100)
#: ... and extra ones for floating sequences (exact in float32, so no rounding question).
FLOAT_PADDING = (0.5, -2.25, 3.0, -1.0)


# --------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class BatchCase:
    """A batch as the checks build it: the real samples, plus None at given positions.

    ``lengths``, ``labels`` and ``label_kinds`` describe the real samples in input
    order; ``none_at`` are the positions of None samples in the final list (sorted).
    """

    lengths: tuple[int, ...]
    features: tuple[int, ...] = ()
    dtype: str = "float32"
    labels: tuple[int, ...] | None = None
    label_kinds: tuple[str, ...] | None = None
    none_at: tuple[int, ...] = ()
    seed: int = 0

    @property
    def B(self) -> int:
        return len(self.lengths)

    @property
    def T_max(self) -> int:
        return max(self.lengths, default=0)

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]

    def label_values(self) -> tuple[int, ...]:
        return self.labels if self.labels is not None else tuple(range(3, 3 + self.B))

    def kinds(self) -> tuple[str, ...]:
        return self.label_kinds if self.label_kinds is not None else ("int",) * self.B

    def sequences(self) -> list[Tensor]:
        """The real samples' sequences, (T_i, *F) each, drawn from the case's seed."""
        g = torch.Generator().manual_seed(self.seed)
        out = []
        for T in self.lengths:
            shape = (T, *self.features)
            if self.torch_dtype.is_floating_point:
                out.append(torch.randn(shape, generator=g, dtype=self.torch_dtype))
            else:
                out.append(torch.randint(-50, 50, shape, generator=g, dtype=self.torch_dtype))
        return out

    def samples(self) -> list:
        """The batch sent to collate_fn: (sequence, label) tuples, None where ``none_at`` says."""
        real = [
            (seq, make_label(value, kind))
            for seq, value, kind in zip(self.sequences(), self.label_values(), self.kinds())
        ]
        batch, it = [], iter(real)
        for position in range(len(real) + len(self.none_at)):
            batch.append(None if position in self.none_at else next(it))
        return batch

    def describe(self) -> str:
        nones = f", None at {list(self.none_at)}" if self.none_at else ""
        return (
            f"{self.B} sequence{'s' if self.B != 1 else ''} of lengths {list(self.lengths)}, trailing shape "
            f"{self.features}, {self.dtype}{nones}"
        )


def make_label(value: int, kind: str):
    return value if kind == "int" else torch.tensor(value, dtype=LABEL_DTYPES[kind])


@st.composite
def batch_cases(
    draw,
    *,
    dtypes=("float32",),
    feature_dims: tuple[int, int] = (0, 0),
    max_B: int = 5,
    min_len: int = 0,
    max_len: int = 5,
    nones: bool = False,
    label_kinds=("int",),
    mixed_labels: bool = False,
) -> BatchCase:
    """A batch of 1..max_B real samples of lengths min_len..max_len (0 included by default),
    each with ``feature_dims[0]..feature_dims[1]`` trailing feature dims.

    ``nones`` inserts 1..3 None samples at random places. ``mixed_labels`` draws
    each label's kind separately; otherwise one kind for the whole batch.
    """
    B = draw(st.integers(1, max_B), label="B")
    lengths = tuple(draw(st.lists(st.integers(min_len, max_len), min_size=B, max_size=B)))
    features = draw(shapes(dims=feature_dims, sides=(1, 3)))
    if mixed_labels:
        kinds = tuple(draw(st.lists(st.sampled_from(label_kinds), min_size=B, max_size=B)))
    else:
        kinds = (draw(st.sampled_from(label_kinds)),) * B
    labels = tuple(draw(st.integers(*LABEL_RANGES[k])) for k in kinds)
    none_at: tuple[int, ...] = ()
    if nones:
        n_none = draw(st.integers(1, 3))
        total = B + n_none
        none_at = tuple(sorted(draw(st.sets(st.integers(0, total - 1), min_size=n_none, max_size=n_none))))
    return BatchCase(
        lengths=lengths,
        features=features,
        dtype=draw(st.sampled_from(dtypes)),
        labels=labels,
        label_kinds=kinds,
        none_at=none_at,
        seed=draw(seeds()),
    )


def padding_values_for(dtype: str):
    """Padding values fit for the dtype: integers always, exact floats for float data."""
    values = INT_PADDING if dtype == "int64" else INT_PADDING + FLOAT_PADDING
    return st.sampled_from(values)


# --------------------------------------------------------------------------- expected


def expected_batch(case: BatchCase, padding_value=0) -> tuple[Tensor, Tensor, Tensor]:
    """(padded, lengths, labels) as the contract defines them.

    padding_value is converted to the sequences' dtype as torch.full does (a float
    value truncates toward zero for integer data), which is what the README states.
    """
    seqs = case.sequences()
    padded = torch.full((case.B, case.T_max, *case.features), padding_value, dtype=case.torch_dtype)
    for i, seq in enumerate(seqs):
        padded[i, : seq.shape[0]] = seq
    lengths = torch.tensor(case.lengths, dtype=torch.int64)
    labels = torch.tensor(case.label_values(), dtype=torch.int64)
    return padded, lengths, labels


def expected_mask(lengths: Tensor, max_len: int | None = None) -> Tensor:
    width = int(lengths.max()) if max_len is None else max_len
    return torch.arange(width)[None, :] >= lengths[:, None]


# --------------------------------------------------------------------------- calls


def triple(report: dict) -> dict:
    """The probe's report of one collate_fn call, after checking that it returned a triple."""
    return expect_returned(report, function="collate_fn", returns="a tuple (padded, lengths, labels)")


def run_collate(sandbox, case: BatchCase, padding_value=None) -> dict:
    """Call collate_fn on the case's batch (padding_value only when given)."""
    kwargs = {} if padding_value is None else {"padding_value": padding_value}
    return triple(call(sandbox, "collate_batch", case.samples(), **kwargs))


def check_batch(result: dict, case: BatchCase, padding_value=0, *, what: str = "") -> None:
    """Assert the candidate's triple is exactly the expected batch, naming what differs.

    Shapes and dtypes first (expect_tensor), then lengths (saying when they are
    only reordered), labels, each row's data, and last the padding region.
    """
    where = f" ({what or case.describe()})"
    padded_e, lengths_e, labels_e = expected_batch(case, padding_value)
    padded = expect_tensor(result["padded"], shape=tuple(padded_e.shape), dtype=padded_e.dtype,
                           name=f"padded{where}")
    lengths = expect_tensor(result["lengths"], shape=(case.B,), dtype=torch.int64, name=f"lengths{where}")
    labels = expect_tensor(result["labels"], shape=(case.B,), dtype=torch.int64, name=f"labels{where}")
    if not torch.equal(lengths, lengths_e):
        got, want = lengths.tolist(), lengths_e.tolist()
        extra = ""
        if sorted(got) == sorted(want):
            extra = ": the same lengths in another order, but samples must stay in input order"
        raise AssertionError(f"lengths{where}: got {got}, expected {want}{extra}")
    if not torch.equal(labels, labels_e):
        raise AssertionError(f"labels{where}: got {labels.tolist()}, expected {labels_e.tolist()}")
    for i, T in enumerate(case.lengths):
        if (difference := first_difference(padded[i, :T], padded_e[i, :T])) is not None:
            raise AssertionError(f"padded[{i}, :{T}] (sample {i}'s data){where}: {difference}")
    for i, T in enumerate(case.lengths):
        if (difference := first_difference(padded[i, T:], padded_e[i, T:])) is not None:
            pad = padded_e[i, T:].flatten()[0].item()
            raise AssertionError(f"padded[{i}, {T}:] (padding after sample {i}){where} must all equal the padding "
                                 f"value {pad!r}: {difference}")
