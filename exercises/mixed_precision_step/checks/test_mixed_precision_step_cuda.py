"""CUDA checks for amp_train_step(..., device_type="cuda"): float16 autocast, torch.amp.GradScaler("cuda").

Marked ``gpu``: the grader skips them, with a reason, when the sandbox sees no GPU (graded
without ``--gpus``, or on a machine without one), and skipped checks count toward neither
score nor max. The probe runs the same step as on CPU with the model, its batches and a
recording GradScaler("cuda") on the GPU, and returns CPU copies plus each parameter's
device type. The truth is the same float32 CPU reference, within float16 tolerance.
"""

from __future__ import annotations

import pytest
import torch

from _mixed_precision_step_helpers import (
    PARAMS,
    REL_FP16,
    Case,
    check_autocast_events,
    check_params,
    check_returned,
    check_step_grads,
    make_params,
    reference,
)


def _check_all_cuda(sandbox, case: Case) -> list:
    calls = case.call(sandbox, device_type="cuda")
    ref = reference(case)
    for i, call in enumerate(calls):
        for name in PARAMS:
            if call["devices"][name] != "cuda":
                raise AssertionError(f"{case.describe()}, on CUDA: after step {i}, parameter {name} is on "
                                     f"{call['devices'][name]}; the model must stay where it is (on the GPU)")
    check_step_grads(calls, case, ref, rel=REL_FP16)
    check_params(calls, case, ref, rel=REL_FP16)
    check_returned(calls, case, ref, rel=REL_FP16)
    return calls


@pytest.mark.gpu
@pytest.mark.points(2)
@pytest.mark.hint("On CUDA the autocast dtype is torch.float16 (not bfloat16); the model is never cast.")
def test_cuda_step_float16_matches_float32(sandbox):
    """On CUDA: float16 autocast over forward and loss only, float32 master weights on the GPU, steps match float32"""
    case = Case(seed=21, steps=3, momentum=0.9, max_grad_norm=0.5)
    calls = _check_all_cuda(sandbox, case)
    check_autocast_events(calls, "float16", where="on CUDA, ", autocast="autocast('cuda')")
    for i, call in enumerate(calls):
        for name, p in call["params"].items():
            if p.dtype != torch.float32:
                raise AssertionError(f"on CUDA, after step {i}, parameter {name} is {p.dtype}; "
                                     f"the master weights must stay float32")


@pytest.mark.gpu
@pytest.mark.points(2)
def test_cuda_inf_skips_step_and_halves_scale(sandbox):
    """On CUDA: an inf loss or an inf gradient skips the step (weights unchanged) and halves the scale"""
    case = Case(seed=22, steps=3, poison={0: "loss", 2: "grad"}, init_scale=2.0**12)
    calls = _check_all_cuda(sandbox, case)
    before = {0: make_params(case.seed), 2: calls[1]["params"]}
    for i, start in before.items():
        if any(e.startswith("step:") for e in calls[i]["events"]):
            raise AssertionError(f"{case.describe()}, on CUDA: optimizer.step() ran on the poisoned step {i} "
                                 f"(events: {calls[i]['events']})")
        for name, value in start.items():
            if not torch.equal(calls[i]["params"][name], value):
                raise AssertionError(f"{case.describe()}, on CUDA: the skipped step {i} changed {name}; "
                                     f"it must stay bit for bit")
