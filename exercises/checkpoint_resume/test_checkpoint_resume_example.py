"""Example tests for the checkpoint_resume exercise.
Run: pytest exercises/checkpoint_resume/test_checkpoint_resume_example.py

These are examples to read and run while you work, not the grade: the graded checks are
hidden and cover much more (see README.md): optimizer and scheduler states, the restore
order, atomic writes, refusing pickled code.
"""

import random

import pytest
import torch
from torch import nn

from checkpoint import load_checkpoint, save_checkpoint


def build():
    model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return model, opt, torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)


def train(model, opt, sched, epochs, losses):
    for _ in range(epochs):
        order = list(range(8))
        random.shuffle(order)                                 # Python's RNG
        for i in order:
            x = torch.full((1, 3), i / 8) + torch.randn(1, 3)  # torch's RNG (and dropout)
            loss = (model(x) - 1).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())


def test_resume_is_bit_identical(tmp_path):
    torch.manual_seed(0), random.seed(0)
    model, opt, sched = build()
    straight = []
    train(model, opt, sched, 3, straight)

    torch.manual_seed(0), random.seed(0)
    model, opt, sched = build()
    resumed = []
    train(model, opt, sched, 1, resumed)
    save_checkpoint(tmp_path / "ckpt.pt", model, opt, sched, epoch=1, step=8)

    torch.manual_seed(123), random.seed(123)                 # "a new process"
    model, opt, sched = build()
    assert load_checkpoint(tmp_path / "ckpt.pt", model, opt, sched) == {"epoch": 1, "step": 8}
    train(model, opt, sched, 2, resumed)
    assert resumed == straight


def test_file_loads_with_weights_only(tmp_path):
    model, opt, sched = build()
    save_checkpoint(tmp_path / "ckpt.pt", model, opt, sched, epoch=0, step=0)
    assert isinstance(torch.load(tmp_path / "ckpt.pt", weights_only=True), dict)
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.pt"]   # no temporary file left


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing-here"):
        load_checkpoint(tmp_path / "nothing-here.pt", *build())
