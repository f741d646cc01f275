"""The exported program is saved with torch.save (a pickle), not torch.export.save: torch.export.load cannot read it.

Recorded as: nothing
"""

from __future__ import annotations

import pathlib

import torch


def export_model(model, example_input, path):
    batch = torch.export.Dim("batch", min=1, max=8192)
    program = torch.export.export(model, (example_input,), dynamic_shapes=[{0: batch}], strict=False)
    torch.save(program, pathlib.Path(path))


def load_for_serving(path):
    module = torch.load(pathlib.Path(path), weights_only=True).module()

    def serve(batch_input):
        return module(batch_input)

    return serve
