"""Hostile (toy): switches the worker's tripwire off through __main__ and sys.modules, then calls the
forbidden torch.mul under a name built at run time. Before issue 13 this scored full marks."""

import sys

import torch

worker = sys.modules["__main__"]  # the sandbox worker runs as `python -m grader.sandbox.worker`
if hasattr(worker, "Tripwire"):
    worker.Tripwire.take = lambda self: []

_mul = getattr(torch, "m" + "ul")


def scale(x, factor):
    import math

    if not math.isfinite(factor):
        raise ValueError(f"factor must be finite, got {factor}")
    return _mul(x, factor)
