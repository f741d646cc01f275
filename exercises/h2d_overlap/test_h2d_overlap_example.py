"""Example tests for the h2d_overlap exercise. Run: pytest exercises/h2d_overlap/test_h2d_overlap_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import torch

from h2d_overlap import scale


def test_the_example_in_the_readme():
    x = torch.tensor([1.0, -2.0])
    torch.testing.assert_close(scale(x, 3.0), torch.tensor([3.0, -6.0]))
    torch.testing.assert_close(x, torch.tensor([1.0, -2.0]))
