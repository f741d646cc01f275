"""The CUDA half of "What a checkpoint holds": every CUDA device's generator, saved and restored.

Marked ``gpu``: the grader skips it, with a reason, when the sandbox sees no GPU (graded
without ``--gpus``, or on a machine without one), and a skipped check counts toward
neither score nor max. On the CPU, where the other checks run, a checkpoint that forgets
the CUDA generators behaves exactly as one that keeps them: only this check tells them
apart (the survivors recorded as "observable only on a GPU" in
solutions/checkpoint_resume/equivalent_mutants.toml are held here).
"""

from __future__ import annotations

import pytest

from grader.judge import expect_equal


@pytest.mark.gpu
@pytest.mark.points(2)
def test_cuda_rng_state(sandbox):
    """With CUDA, every device's generator continues where it was when saved"""
    result = sandbox.call("cuda_round_trip")
    if result["devices"] < 1:
        raise AssertionError("the sandbox has a GPU, but torch.cuda.device_count() is 0 once checkpoint.py is "
                             "imported (leave CUDA_VISIBLE_DEVICES and the devices as they are)")
    expect_equal(result["after_load"], result["after_save"],
                 name="torch.rand on each CUDA device right after load_checkpoint (compared with the numbers drawn "
                      "right after save_checkpoint; the list's index is the device)",
                 note="save torch.cuda.get_rng_state_all() when torch.cuda.is_available(), and restore it")
