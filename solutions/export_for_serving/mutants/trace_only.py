"""Mutant: traces with torch.jit.trace and saves TorchScript instead of exporting with torch.export.

Tracing records only the operations the example input ran: it cannot trace a
torch.cond at all (a data-dependent branch), and the file is a TorchScript archive,
not one torch.export.load can read. On a plain MLP it still serves every batch size.
"""

from __future__ import annotations

import torch


def export_model(model, example_input, path):
    traced = torch.jit.trace(model, (example_input,))
    torch.jit.save(traced, str(path))


def load_for_serving(path):
    return torch.jit.load(str(path))
