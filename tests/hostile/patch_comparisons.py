"""Patches every comparison it can reach, then returns a wrong answer.

Only the sandbox's copies are patched: the judge compares in its own process.
"""
import torch
import torch.testing

torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.testing.assert_close = lambda *a, **k: None
torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)


def scale(x, factor):
    return torch.zeros_like(x)
