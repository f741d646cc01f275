"""Example tests for the warmup_cosine_scheduler exercise.
Run: pytest exercises/warmup_cosine_scheduler/test_warmup_cosine_scheduler_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import math

import pytest
import torch

from scheduler import WarmupCosine


def _optimizer(*lrs):
    return torch.optim.SGD([{"params": [torch.nn.Parameter(torch.zeros(1))], "lr": lr} for lr in lrs])


def _run(opt, sched, steps):
    seen = [[g["lr"] for g in opt.param_groups]]
    for _ in range(steps):
        opt.step()
        sched.step()
        seen.append([g["lr"] for g in opt.param_groups])
    return seen


def test_the_example_in_the_readme():
    opt = _optimizer(0.1, 1.0)
    sched = WarmupCosine(opt, warmup_steps=3, total_steps=8, min_lr=0.01)
    group1 = [lrs[1] for lrs in _run(opt, sched, 9)]
    cosine = [0.01 + 0.99 * (1 + math.cos(math.pi * k / 5)) / 2 for k in range(6)]
    expected = [1 / 3, 2 / 3, 1.0] + cosine + [0.01]
    assert group1 == pytest.approx(expected, rel=1e-9)
    assert sched.get_last_lr() == pytest.approx([0.01, 0.01])


def test_no_warmup_starts_at_base():
    opt = _optimizer(0.5)
    WarmupCosine(opt, warmup_steps=0, total_steps=4)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.5)


def test_resume_continues_the_schedule():
    opt = _optimizer(1.0)
    sched = WarmupCosine(opt, warmup_steps=2, total_steps=6)
    uninterrupted = _run(opt, sched, 7)

    opt = _optimizer(1.0)
    sched = WarmupCosine(opt, warmup_steps=2, total_steps=6)
    _run(opt, sched, 3)
    checkpoint = {"optimizer": opt.state_dict(), "scheduler": sched.state_dict()}
    opt = _optimizer(1.0)
    sched = WarmupCosine(opt, warmup_steps=2, total_steps=6)
    opt.load_state_dict(checkpoint["optimizer"])
    sched.load_state_dict(checkpoint["scheduler"])
    resumed = [lrs[0] for lrs in _run(opt, sched, 4)]
    assert resumed == pytest.approx([lrs[0] for lrs in uninterrupted[3:]], rel=1e-9)


def test_errors():
    with pytest.raises(ValueError, match="warmup_steps"):
        WarmupCosine(_optimizer(0.1), warmup_steps=-1, total_steps=10)
    with pytest.raises(ValueError, match="total_steps"):
        WarmupCosine(_optimizer(0.1), warmup_steps=5, total_steps=5)
