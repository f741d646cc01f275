"""Export a model for serving: torch.export with a dynamic batch dimension, one file, loaded without the class.

Write both functions; README.md has the whole contract and the decisions.
"""

from __future__ import annotations

import os
from typing import Callable

import torch
from torch import nn


def export_model(model: nn.Module, example_input: torch.Tensor, path: str | os.PathLike) -> None:
    """Export ``model`` with torch.export for ``example_input`` and save it at ``path``.

    - dim 0 of the input (the batch) is dynamic, declared from 1 to at least 4096 (no maximum is fine);
      every other dim stays at example_input's size;
    - the file at ``path`` is what torch.export.save wrote, and nothing else is written beside it;
    - data-dependent branches in the model are torch.cond: the saved program keeps both.
    """
    raise NotImplementedError("export_model: export with torch.export and save the program at path")


def load_for_serving(path: str | os.PathLike) -> Callable[[torch.Tensor], torch.Tensor]:
    """Load what export_model saved at ``path``: a callable mapping a batch of any size >= 1 to the model's output.

    It runs in a fresh process: the model's class cannot be imported there and nothing
    export_model kept in memory exists there.
    """
    raise NotImplementedError("load_for_serving: load the program saved at path")
