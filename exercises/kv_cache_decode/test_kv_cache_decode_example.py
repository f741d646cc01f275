"""Example tests for the kv_cache_decode exercise. Run: pytest exercises/kv_cache_decode/test_kv_cache_decode_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import torch

from kv_cache_decode import scale


def test_the_example_in_the_readme():
    x = torch.tensor([1.0, -2.0])
    torch.testing.assert_close(scale(x, 3.0), torch.tensor([3.0, -6.0]))
    torch.testing.assert_close(x, torch.tensor([1.0, -2.0]))
