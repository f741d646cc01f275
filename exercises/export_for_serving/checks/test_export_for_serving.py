"""Checks for export_model(model, example_input, path) and load_for_serving(path)."""

from __future__ import annotations

import pytest

from _export_for_serving_helpers import (MIN_DECLARED_MAX, expect_outputs, expect_served, run, saved_file,
                                         scenario)
from grader.judge import expect_bounded

#: The scenario several checks read (the probe exports it once): Mlp, example batch 4, batches 1..33 and 100.
MLP = ("mlp", 0, 4, list(range(1, 34)) + [100])


def _mlp(sandbox):
    kind, seed, example_batch, batches = MLP
    example, xs = scenario(kind, seed, example_batch, batches)
    return run(sandbox, kind, seed, example, xs, archive=True), xs


# ---------------------------------------------------------------------------- serving


@pytest.mark.points(3)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Export with torch.export.export(model, (example_input,), dynamic_shapes=...) marking dim 0 "
                  "as a torch.export.Dim, save with torch.export.save, and load with torch.export.load(path)"
                  ".module(): it must serve every batch size, in a process where the model's class is unknown.")
def test_serves_every_batch_size(sandbox):
    """The loaded program equals the model for every batch size from 1 to 33 (and 100)"""
    report, xs = _mlp(sandbox)
    expect_served(report, MLP[0], MLP[1], xs)


@pytest.mark.points(2)
def test_keeps_branch_example_did_not_take(sandbox):
    """The loaded program keeps the model's torch.cond branch that the example input did not take"""
    kind, seed = "gated", 3
    example, xs = scenario(kind, seed, 3, [1, 2, 3, 8, 13, 21], shifts=(2.0, -2.0), example_shift=-2.0)
    report = run(sandbox, kind, seed, example, xs)
    expect_served(report, kind, seed, xs)


@pytest.mark.points(2)
def test_any_argument_name_and_rank(sandbox):
    """Works whatever the forward's argument is called and whatever the input's rank; only dim 0 varies"""
    kind, seed = "tokens", 5
    example, xs = scenario(kind, seed, 3, [1, 2, 7, 16])
    report = run(sandbox, kind, seed, example, xs)
    expect_served(report, kind, seed, xs)


# ---------------------------------------------------------------------------- the file


@pytest.mark.points(2)
def test_file_is_a_torch_export_archive(sandbox):
    """The file at path is a torch.export archive: torch.export.load(path).module() equals the model"""
    report, xs = _mlp(sandbox)
    saved_file(report, "model.pt2")
    if "archive_raised" in report:
        raise AssertionError("torch.export.load(path) could not read the file export_model wrote: "
                             f"{report['archive_raised'].get('type')}: "
                             f"{str(report['archive_raised'].get('message'))[:300]}")
    expect_outputs(report.get("archive"), MLP[0], MLP[1], xs, "torch.export.load(path).module()(x)")


@pytest.mark.points(2)
def test_declares_batch_from_one(sandbox):
    """The saved program declares its batch dimension dynamic, from 1 to at least 4096"""
    report, _ = _mlp(sandbox)
    saved_file(report, "model.pt2")
    declared = report.get("batch_range")
    if "archive_raised" in report or not isinstance(declared, list) or len(declared) != 2:
        raise AssertionError("torch.export.load(path) gave no program whose input's dim 0 has a declared range "
                             "(the file is not a torch.export archive, or dim 0 is not a symbol)")
    lower, upper = declared
    if type(lower) is int and type(upper) is int and lower == upper:
        raise AssertionError(f"the saved program's batch dimension is fixed at {lower}, not dynamic: export with "
                             "dynamic_shapes marking dim 0 as a torch.export.Dim")
    expect_bounded(lower, name="the declared minimum batch size", at_most=1,
                   note="A program declared for batch sizes from 2 (Dim.AUTO, Dim.DYNAMIC or min=2) may be "
                        "compiled or validated on that range, which leaves out a single request.")
    if upper != -1:  # -1: no upper bound
        expect_bounded(upper, name="the declared maximum batch size", at_least=MIN_DECLARED_MAX,
                       note=f"Declare no maximum, or one of at least {MIN_DECLARED_MAX}.")


@pytest.mark.points(1)
def test_writes_only_path(sandbox):
    """export_model writes one file, at path, and nothing else in its folder"""
    report, _ = _mlp(sandbox)
    saved_file(report, "model.pt2")
    files = report["files"]
    others = sorted(set(files) - {"model.pt2"})
    if others:
        raise AssertionError(f"export_model(model, example_input, path) left {others} beside path; "
                             "it must write the file at path and nothing else")
