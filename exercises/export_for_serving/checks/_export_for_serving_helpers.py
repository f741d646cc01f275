"""The judge's side of export_for_serving: the scenarios, what is expected, and how a report is read.

The expected outputs are shared.py's models run eagerly here (``shared.eager``: Gated's
torch.cond as a Python ``if``), never anything computed in the sandbox.
"""

from __future__ import annotations

import torch

import shared
from grader.judge import Opaque, expect_close, expect_tensor

ATOL, RTOL = 1e-5, 1e-4
#: The largest batch the saved program must declare it accepts (or no upper bound at all).
MIN_DECLARED_MAX = 4096


def scenario(kind: str, seed: int, example_batch: int, batches: list[int], shifts=(0.0,),
             example_shift: float = 0.0) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """(example input, inputs): one input per batch size, shifts taken in turn (they pick Gated's branch)."""
    example = shared.inputs(kind, [example_batch], seed + 1000, example_shift)[0]
    xs = [shared.inputs(kind, [n], seed + 2000 + i, shifts[i % len(shifts)])[0] for i, n in enumerate(batches)]
    return example, xs


def run(sandbox, kind: str, seed: int, example: torch.Tensor, xs: list, name: str = "model.pt2",
        archive: bool = False) -> dict:
    """The probe's report on one scenario; ``archive``: torch.export.load(path).module() run on the inputs too."""
    report = sandbox.call("serve", kind, seed, example, xs, name, archive)
    if not isinstance(report, dict):
        raise AssertionError(f"probe 'serve' returned {report!r:.200}, expected a dict")
    if "error" in report:
        raise AssertionError(f"loading the saved file in a fresh process failed: {report['error']}")
    return report


def _why(record) -> str:
    if isinstance(record, dict):
        return f"{record.get('type')}: {str(record.get('message'))[:300]}"
    return repr(record)[:300]


def saved_file(report: dict, name: str) -> None:
    """Fails unless export_model left a file at the path it was given."""
    if name not in (report.get("files") or {}):
        raise AssertionError(f"export_model(model, example_input, path) wrote no file at path ({name}); "
                             f"the folder holds {sorted(report.get('files') or {})}")


def expect_outputs(outputs, kind: str, seed: int, xs: list, what: str) -> None:
    """Each output equals the model's own output for that input (within ATOL/RTOL)."""
    model = shared.build(kind, seed)
    if not isinstance(outputs, list) or len(outputs) != len(xs):
        raise AssertionError(f"{what}: expected {len(xs)} outputs, got {outputs!r:.200}")
    for x, got in zip(xs, outputs):
        n = x.shape[0]
        label = f"{what}, batch size {n} (input shape {tuple(x.shape)})"
        if isinstance(got, dict) and "raised" in got:
            raise AssertionError(f"{label}: raised {_why(got['raised'])}")
        expected = shared.eager(model, x)
        out = expect_tensor(got, shape=expected.shape, dtype=expected.dtype, name=label)
        expect_close(out, expected, label, atol=ATOL, rtol=RTOL)


def expect_served(report: dict, kind: str, seed: int, xs: list, name: str = "model.pt2") -> None:
    """load_for_serving(path), in a fresh process, returned a callable whose outputs equal the model's."""
    saved_file(report, name)
    if "load_raised" in report:
        raise AssertionError("load_for_serving(path), in a fresh process where the model's class cannot be "
                             f"imported and nothing export_model kept in memory exists, raised "
                             f"{_why(report['load_raised'])}")
    if "load_returned" in report:
        got = report["load_returned"]
        raise AssertionError("load_for_serving(path) must return a callable; it returned "
                             f"{getattr(got, 'type_name', type(got).__name__)}")
    expect_outputs(report.get("served"), kind, seed, xs, "load_for_serving(path)(x)")


def opaque_name(value) -> str:
    return value.type_name if isinstance(value, Opaque) else type(value).__name__
