"""Scale a tensor: implement scale below. See README.md for the full contract."""

from __future__ import annotations

import torch


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    """Return x * factor as a new tensor of x's shape and dtype; leave x unchanged.

    torch.mul may not be used (the * operator is fine).
    """
    raise NotImplementedError("scale")
