"""Mutant: saves the program, but load_for_serving hands back the eager model export_model kept in memory.

A module-level cache works when loading in the exporting process; a serving process
starts empty, the cache is gone, and loading fails.
"""

from __future__ import annotations

import os

import torch
from torch.export import Dim

_EXPORTED: dict = {}


def export_model(model, example_input, path):
    program = torch.export.export(model, (example_input,), dynamic_shapes=({0: Dim("batch", min=1)},))
    torch.export.save(program, path)
    _EXPORTED[os.path.abspath(path)] = model  # "faster than reading the file back"


def load_for_serving(path):
    return _EXPORTED[os.path.abspath(path)]
