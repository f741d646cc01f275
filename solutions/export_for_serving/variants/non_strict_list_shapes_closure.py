"""Variant (written from the README alone): non-strict export (strict=False) with dynamic_shapes given as a
list, the batch a Dim from 1 to 8192; the path written by torch.export.save through pathlib; loading returns a
plain closure around the loaded program's module."""

from __future__ import annotations

import pathlib

import torch


def export_model(model, example_input, path):
    batch = torch.export.Dim("batch", min=1, max=8192)
    program = torch.export.export(model, (example_input,), dynamic_shapes=[{0: batch}], strict=False)
    torch.export.save(program, pathlib.Path(path))


def load_for_serving(path):
    module = torch.export.load(pathlib.Path(path)).module()

    def serve(batch_input):
        return module(batch_input)

    return serve
