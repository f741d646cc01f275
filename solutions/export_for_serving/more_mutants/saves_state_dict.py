"""Mutant: saves the state_dict and the model's class instead of a program, and rebuilds the model on load.

The class is pickled by reference (its module and qualified name), so rebuilding
needs the class importable in the serving process, and its constructor arguments
known; there the class cannot be imported, and the file is not a torch.export archive.
"""

from __future__ import annotations

import torch


def export_model(model, example_input, path):
    torch.save({"model_class": type(model), "state_dict": model.state_dict()}, path)


def load_for_serving(path):
    saved = torch.load(path, weights_only=False)
    model = saved["model_class"]()
    model.load_state_dict(saved["state_dict"])
    return model.eval()
