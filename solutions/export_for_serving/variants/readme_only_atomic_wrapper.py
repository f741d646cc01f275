"""Written from the README alone, as a candidate would: a bounded Dim (1..4096), an atomic save, a no_grad wrapper.

Differs from the reference: the batch Dim has an explicit maximum of 4096 (the least the
README allows), the archive is written to a temporary file in path's folder and renamed
over path (nothing else is left), and load_for_serving returns a plain function that runs
the loaded module under torch.no_grad() instead of the module itself.
"""

from __future__ import annotations

import os
import tempfile

import torch
from torch import nn


def export_model(model: nn.Module, example_input: torch.Tensor, path) -> None:
    n = torch.export.Dim("n", min=1, max=4096)
    spec = {0: n}  # every other dim of the input stays static
    ep = torch.export.export(model, args=(example_input,), dynamic_shapes=(spec,))
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".pt2.tmp")
    os.close(fd)
    try:
        torch.export.save(ep, tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def load_for_serving(path):
    module = torch.export.load(path).module()

    def serve(x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return module(x)

    return serve
