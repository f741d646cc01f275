"""Judge-side helpers for the checkpoint_resume checks: exact comparisons of what the probes return.

Everything must match exactly (resuming is bit-identical or it is wrong), so the
comparisons are torch.equal and ==, with messages that say where the first
difference is. The file name is exercise-specific so that it never clashes with
another exercise's helpers.
"""

from __future__ import annotations

import torch

from grader.judge import expect_tensor


def first_difference(got, want, where: str = "") -> str | None:
    """Where got and want first differ (nested dicts, lists, tuples, tensors, scalars), or None."""
    if isinstance(want, torch.Tensor):
        if type(got) is not torch.Tensor:
            return f"{where}: expected a tensor, got {type(got).__name__}"
        if got.shape != want.shape or got.dtype != want.dtype:
            return f"{where}: expected {tuple(want.shape)} {want.dtype}, got {tuple(got.shape)} {got.dtype}"
        if not torch.equal(got, want):
            return f"{where}: values differ ({got.flatten()[:4].tolist()} vs {want.flatten()[:4].tolist()} ...)"
        return None
    if isinstance(want, dict):
        if not isinstance(got, dict) or sorted(map(str, got)) != sorted(map(str, want)):
            shown = sorted(map(str, got)) if isinstance(got, dict) else type(got).__name__
            return f"{where}: expected keys {sorted(map(str, want))}, got {shown}"
        for k in want:
            if (d := first_difference(got[k], want[k], f"{where}[{k!r}]")) is not None:
                return d
        return None
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return f"{where}: expected {len(want)} items, got {got!r}"[:300]
        for i, (g, w) in enumerate(zip(got, want)):
            if (d := first_difference(g, w, f"{where}[{i}]")) is not None:
                return d
        return None
    if got != want:
        return f"{where}: {got!r} != {want!r}"
    return None


def expect_same(got, want, what: str) -> None:
    if (d := first_difference(got, want)) is not None:
        raise AssertionError(f"{what} differs from the original at {d}")


def compare_runs(result: dict, context: str) -> None:
    """The resumed run's (step, loss) log and final parameters equal the straight run's, exactly."""
    straight, resumed = result["straight"], result["resumed"]
    want_steps, got_steps = straight["steps"], resumed["steps"]
    if got_steps != want_steps:
        raise AssertionError(f"{context}: the resumed run logged steps {got_steps}, the uninterrupted one "
                             f"{want_steps} (check the epoch and step that load_checkpoint returns)")
    want = expect_tensor(straight["losses"], name="straight losses")
    got = expect_tensor(resumed["losses"], shape=tuple(want.shape), dtype=want.dtype, name=f"{context}: losses")
    if not torch.equal(got, want):
        i = int((got != want).nonzero()[0])
        raise AssertionError(
            f"{context}: the loss at step {want_steps[i]} is {got[i].item()!r} resumed but {want[i].item()!r} "
            f"uninterrupted (the first difference; every one must be bit-identical)"
        )
    expect_same(result["resumed_params"], result["straight_params"], f"{context}: the final state_dict")
