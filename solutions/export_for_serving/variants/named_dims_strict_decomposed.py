"""dynamic_shapes keyed by the forward's own parameter name, strict (TorchDynamo) export, decomposed to core ATen.

Differs from the reference: it reads forward's signature to key dynamic_shapes by the
argument's name (a dict, not a tuple), exports with strict=True, runs the default
decompositions before saving (so the archive holds core ATen ops: addmm, not linear),
and saves through an open file object.
"""

from __future__ import annotations

import inspect

import torch
from torch.export import Dim


def export_model(model, example_input, path):
    (arg_name, *_rest) = inspect.signature(model.forward).parameters
    shapes = {arg_name: {0: Dim("batch", min=1, max=2**20)}}
    program = torch.export.export(model, (example_input,), dynamic_shapes=shapes, strict=True)
    program = program.run_decompositions()
    with open(path, "wb") as f:
        torch.export.save(program, f)


def load_for_serving(path):
    with open(path, "rb") as f:
        program = torch.export.load(f)
    return program.module()
