"""Export a model for serving with torch.export: a dynamic batch dimension, one self-contained file."""

from __future__ import annotations

import os

import torch
from torch.export import Dim


def export_model(model: torch.nn.Module, example_input: torch.Tensor, path: str | os.PathLike) -> None:
    """Export ``model`` for ``example_input``'s shape with a dynamic batch dimension, and save it at ``path``."""
    # min=1 declares a single request too (Dim.AUTO would infer 2..inf); no max: any batch size.
    batch = Dim("batch", min=1)
    # One entry per positional input, so the forward's argument name does not matter;
    # dims not named here stay static at the example's size.
    dims = {0: batch}
    # torch.export keeps torch.cond's two branches as subgraphs, unlike tracing.
    program = torch.export.export(model, (example_input,), dynamic_shapes=(dims,))
    # The archive holds the graph, the weights and buffers, and the declared ranges: no class needed.
    torch.export.save(program, path)


def load_for_serving(path: str | os.PathLike):
    """Load what ``export_model`` saved at ``path``: a callable module that maps a batch to the model's output."""
    return torch.export.load(path).module()
