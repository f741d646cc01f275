"""Checks for scale(x, factor) -> Tensor."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from grader.judge import expect_close, expect_tensor


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Return a new tensor, x * factor, and leave x as it was.")
@given(shape=st.lists(st.integers(1, 4), max_size=3), dtype=st.sampled_from([torch.float32, torch.float64]),
       factor=st.floats(-4, 4, allow_nan=False), seed=st.integers(0, 2**16))
def test_scales_and_leaves_x_alone(sandbox, shape, dtype, factor, seed):
    """Returns x * factor in x's shape and dtype, and leaves x unchanged"""
    x = torch.randn(shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))
    got = sandbox.call("scale", x, factor)
    out = expect_tensor(got["out"], shape=x.shape, dtype=dtype, name="scale(x, factor)")
    expect_close(out, x * factor, "scale(x, factor)")
    after = expect_tensor(got["x_after"], shape=x.shape, dtype=dtype, name="x after the call")
    expect_close(after, x, "x after the call", atol=0, rtol=0, note="scale must not change its input.")
