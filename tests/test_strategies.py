"""The seed and shape strategies checks draw from."""

from collections import Counter

import pytest
from hypothesis import given, settings

from grader.judge import seeds, shapes


@settings(max_examples=300, database=None)
@given(seed=seeds(), small=seeds(bits=31), shape=shapes(dims=(0, 3), sides=(0, 2)))
def test_draws_stay_in_range(seed, small, shape):
    assert 0 <= seed < 2**32 and 0 <= small < 2**31
    assert isinstance(shape, tuple) and len(shape) <= 3 and all(0 <= side <= 2 for side in shape)


def test_every_number_of_dimensions_comes_up():
    seen = Counter()

    @settings(max_examples=200, database=None, derandomize=True)
    @given(shape=shapes(dims=(0, 4), sides=(1, 1000)))
    def draw(shape):
        seen[len(shape)] += 1

    draw()
    assert set(seen) == {0, 1, 2, 3, 4}, seen


def test_seed_bits_out_of_range_are_named():
    with pytest.raises(ValueError, match="bits must be in 1..64, got bits=65"):
        seeds(bits=65)
