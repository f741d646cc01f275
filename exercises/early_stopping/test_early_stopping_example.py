"""Example tests for the early_stopping exercise. Run: pytest exercises/early_stopping/test_early_stopping_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import math

import pytest
import torch
from torch import nn

from early_stopping import EarlyStopping


def test_the_table_in_the_readme():
    stopper = EarlyStopping(patience=2, min_delta=0.125)
    assert (stopper.best, stopper.best_step, stopper.counter, stopper.should_stop) == (math.inf, -1, 0, False)

    seen = []
    for metric in [1.0, 0.875, 0.75, 0.75, float("nan"), 0.5]:
        returned = stopper.step(metric)
        seen.append((stopper.best, stopper.best_step, stopper.counter, returned))

    assert seen == [
        (1.0, 0, 0, False),
        (1.0, 0, 1, False),   # 0.875 == 1.0 - 0.125: a tie is not an improvement
        (0.75, 2, 0, False),
        (0.75, 2, 1, False),
        (0.75, 2, 2, True),   # NaN never improves; counter reaches patience
        (0.5, 5, 0, False),   # counting goes on after a stop
    ]


def test_mode_max():
    stopper = EarlyStopping(patience=1, mode="max")
    assert stopper.best == -math.inf
    assert stopper.step(0.5) is False
    assert stopper.step(0.4) is True
    assert stopper.best == 0.5 and stopper.best_step == 0


def test_restore_best_weights_after_more_training():
    model = nn.Linear(2, 1)
    stopper = EarlyStopping(patience=3)
    stopper.step(1.0, model)
    best = {k: v.clone() for k, v in model.state_dict().items()}

    with torch.no_grad():  # "training" changes the weights in place
        model.weight.add_(1.0)
    stopper.step(2.0, model)  # worse: no new snapshot

    stopper.restore_best_weights(model)
    for name, value in model.state_dict().items():
        assert torch.equal(value, best[name])


def test_errors():
    with pytest.raises(ValueError, match="patience"):
        EarlyStopping(patience=0)
    with pytest.raises(ValueError, match="mode"):
        EarlyStopping(mode="avg")
    with pytest.raises(RuntimeError):
        EarlyStopping().restore_best_weights(nn.Linear(2, 1))
