"""Checks for save_checkpoint(path, model, optimizer, scheduler, epoch, step) and load_checkpoint(...)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from grader.judge import candidate_raises, expect_equal, expect_tensor, seeds, weights_only_refusal

KINDS = st.sampled_from(["sgd", "adam"])


# ---------------------------------------------------------------------------- basics


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Save model.state_dict() with epoch and step; load_checkpoint loads the weights into "
                  "the model it is given and returns {'epoch': ..., 'step': ...} exactly as saved.")
def test_round_trip(sandbox):
    """load returns {'epoch', 'step'} as saved and restores the model's weights"""
    for kind, epoch, step in (("sgd", 3, 17), ("adam", 0, 0)):
        result = sandbox.call("round_trip", kind, epoch, step)
        if result["keys"] != ["'epoch'", "'step'"]:
            raise AssertionError(f"load_checkpoint must return a dict with exactly the keys 'epoch' and 'step'; "
                                 f"it returned a {result['info_type']} with keys {result['keys']}")
        info = result["info"]
        if [type(info["epoch"]), type(info["step"])] != [int, int] or info != {"epoch": epoch, "step": step}:
            raise AssertionError(f"save_checkpoint(..., epoch={epoch}, step={step}) then load_checkpoint returned "
                                 f"{info!r}; expected {{'epoch': {epoch}, 'step': {step}}} (Python ints)")
        expect_equal(result["loaded"]["model"], result["saved"]["model"], name="the model's state_dict after loading")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Save only state dicts, tensors and plain Python values (no modules or other objects), "
                  "so that torch.load(path, weights_only=True) reads the file.")
def test_loads_with_weights_only(sandbox):
    """The file loads with torch.load(path, weights_only=True)"""
    for kind in ("sgd", "adam"):
        result = sandbox.call("weights_only", kind)
        if not result["loaded"]:
            raise AssertionError(f"torch.load(path, weights_only=True) refused the checkpoint ({kind}): "
                                 f"{weights_only_refusal(result['error'])}")


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Loading a path with no file raises FileNotFoundError, and the message says which path.")
def test_missing_file(sandbox):
    """A missing file raises FileNotFoundError naming the path"""
    with candidate_raises("FileNotFoundError", match="no-such-run-8431"):
        sandbox.call("missing", "no-such-run-8431.pt")


# ------------------------------------------------------------------------ the states


@pytest.mark.points(2)
def test_optimizer_state(sandbox):
    """The optimizer's state is restored (SGD momentum buffers, Adam's moments and step)"""
    for kind in ("sgd", "adam"):
        result = sandbox.call("round_trip", kind, 2, 8)
        expect_equal(result["loaded"]["optimizer"], result["saved"]["optimizer"],
                     name=f"the {kind} optimizer's state_dict after loading")


@pytest.mark.points(1)
def test_scheduler_state(sandbox):
    """The scheduler's state is restored (last_epoch, the current learning rate)"""
    result = sandbox.call("round_trip", "sgd", 2, 8)
    expect_equal(result["loaded"]["scheduler"], result["saved"]["scheduler"],
                 name="the scheduler's state_dict after loading")
    if result["lr"] != result["saved_lr"]:
        raise AssertionError(f"after loading, the optimizer's learning rate is {result['lr']}, "
                             f"expected {result['saved_lr']}")


def _draws_match(result, what):
    for gen in ("torch", "python"):
        got, want = result["after_load"][gen], result["after_save"][gen]
        expect_equal(got, want, name=f"{what}: the {gen} random numbers drawn right after load_checkpoint (compared "
                                     f"with those drawn right after save_checkpoint)")


@pytest.mark.points(2)
def test_rng_states(sandbox):
    """The torch and Python random generators continue where they were when saved"""
    _draws_match(sandbox.call("round_trip", "sgd", 1, 4), "torch.rand / random.random")


@pytest.mark.points(2)
def test_rng_restored_last(sandbox):
    """The generators are restored after the model is loaded (its load_state_dict draws random numbers)"""
    _draws_match(sandbox.call("round_trip", "adam", 1, 4, net="drawing"),
                 "with a model whose load_state_dict draws from both generators")


# -------------------------------------------------------------------------- resuming


def _compare_runs(result: dict, context: str) -> None:
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
    expect_equal(result["resumed_params"], result["straight_params"], name=f"{context}: the final state_dict")


@pytest.mark.points(4)
@given(epochs=st.integers(1, 3), k=st.integers(0, 3), kind=KINDS, seed=seeds(bits=31))
@example(epochs=3, k=1, kind="sgd", seed=0)
@example(epochs=3, k=2, kind="adam", seed=1)
def test_resume_is_bit_identical(sandbox, epochs, k, kind, seed):
    """Training resumed from a checkpoint is bit-identical to uninterrupted training (losses, weights)"""
    k = min(k, epochs)
    result = sandbox.call("resume", epochs, k, kind, seed)
    _compare_runs(result, f"{kind}, {epochs} epochs, interrupted after epoch {k} (seed {seed})")


# ---------------------------------------------------------------------------- safety


@pytest.mark.points(2)
def test_atomic_write(sandbox):
    """A save that raises leaves the previous checkpoint intact and no temporary file"""
    result = sandbox.call("failing_save")
    if result["after_good"] != ["ckpt.pt"]:
        raise AssertionError(f"after a successful save the folder holds {result['after_good']}; expected only "
                             f"the checkpoint (no temporary file left)")
    if result["raised"] is None:
        raise AssertionError("save_checkpoint with a model state_dict that cannot be pickled returned; the error "
                             "must propagate")
    if result["after"] != result["before"]:
        state = "gone" if result["after"] is None else "changed"
        raise AssertionError(f"a save that raised ({result['raised']['type']}) left the previous checkpoint {state}: write "
                             f"a temporary file in the same folder, then os.replace it over the path")
    if result["files"] != ["ckpt.pt"]:
        raise AssertionError(f"after a save that raised, the folder holds {result['files']}; the temporary "
                             f"file must be removed")
    if result["info"] is None or result["info"]["step"] != 4:
        raise AssertionError(f"the previous checkpoint loads as {result['info']}, expected step 4")


@pytest.mark.points(2)
def test_refuses_pickled_code(sandbox):
    """load_checkpoint reads with weights_only=True: a file with pickled code is refused, never run"""
    result = sandbox.call("pickled_code")
    if result["code_ran"]:
        raise AssertionError("load_checkpoint ran code stored in the file: load with torch.load(path, "
                             "weights_only=True)")
    raised = result["raised"]
    if raised is None:
        raise AssertionError("load_checkpoint accepted a file holding a pickled object; it must raise")
    if "UnpicklingError" not in raised["qualnames"]:
        raise AssertionError(f"load_checkpoint raised {raised['type']} on a file holding a pickled object; expected "
                             f"the pickle.UnpicklingError that torch.load(path, weights_only=True) raises")
