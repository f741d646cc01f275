"""The batch dimension is Dim.AUTO: torch.export infers a range from 2, so a single request is outside it.

Recorded as: dim_auto
"""

from __future__ import annotations

import pathlib

import torch


def export_model(model, example_input, path):
    batch = torch.export.Dim.AUTO
    program = torch.export.export(model, (example_input,), dynamic_shapes=[{0: batch}], strict=False)
    torch.export.save(program, pathlib.Path(path))


def load_for_serving(path):
    module = torch.export.load(pathlib.Path(path)).module()

    def serve(batch_input):
        return module(batch_input)

    return serve
