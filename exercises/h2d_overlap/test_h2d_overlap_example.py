"""Example tests for the h2d_overlap exercise. Run: pytest exercises/h2d_overlap/test_h2d_overlap_example.py

Examples to read and run while you work, not the grade (see README.md). They need an NVIDIA GPU and skip
without one.
"""

import pytest
import torch

from h2d_overlap import overlapped_map

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_one_output_per_batch_in_order():
    device = torch.device("cuda")
    batches = [torch.full((1024,), float(i)).pin_memory() for i in range(4)]
    outs = overlapped_map(lambda x: x * 2 + 1, batches, device)
    assert [o[0].item() for o in outs] == [1.0, 3.0, 5.0, 7.0]
    assert all(o.device.type == "cuda" for o in outs)


def test_fn_runs_with_the_callers_stream_current():
    device = torch.device("cuda")
    mine = torch.cuda.Stream(device)
    seen = []

    def fn(x):
        seen.append(torch.cuda.current_stream(device) == mine)
        return x + 1

    with torch.cuda.stream(mine):
        overlapped_map(fn, [torch.zeros(8).pin_memory() for _ in range(3)], device)
    assert seen == [True, True, True]


def test_an_empty_list():
    assert overlapped_map(lambda x: x, [], torch.device("cuda")) == []
