"""Hypothesis strategies every exercise's checks draw from: seeds and tensor shapes.

Checks draw a seed, not tensors: the judge builds the inputs from it with a
``torch.Generator``, so hypothesis shrinks a failure to a seed and a shape (short
to show a candidate, and the same tensors every time), not to thousands of floats.
"""

from __future__ import annotations

from hypothesis import strategies as st


def seeds(*, bits: int = 32) -> st.SearchStrategy[int]:
    """Seeds ``0 .. 2**bits - 1``: 32 bits for ``torch.Generator().manual_seed``; 31 where the seed
    reaches code that adds to it or keeps it in a C int (``seed + epoch``, ``DistributedSampler``)."""
    if not 1 <= bits <= 64:
        raise ValueError(f"seeds: bits must be in 1..64, got bits={bits!r}")
    return st.integers(0, 2**bits - 1)


@st.composite
def shapes(draw, *, dims: tuple[int, int] = (0, 3), sides: tuple[int, int] = (1, 4)) -> tuple[int, ...]:
    """A shape of ``dims[0]..dims[1]`` dimensions, each of ``sides[0]..sides[1]``.

    The number of dimensions is drawn first, then each side; 0-d (a scalar tensor)
    only when ``dims`` starts at 0, a side of 0 (an empty tensor) only when ``sides`` does.
    """
    n = draw(st.integers(*dims))
    return tuple(draw(st.lists(st.integers(*sides), min_size=n, max_size=n)))
