"""Mutant: pickles the whole module with torch.save(model) and unpickles it with weights_only=False.

The pickle names the model's class by module and qualname, so loading needs that
class importable: in a serving process without it, torch.load fails (and
weights_only=False runs whatever code the file names).
"""

from __future__ import annotations

import torch


def export_model(model, example_input, path):
    torch.save(model, path)


def load_for_serving(path):
    return torch.load(path, weights_only=False).eval()
