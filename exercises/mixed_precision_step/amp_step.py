"""Mixed-precision training step: implement the function below. See README.md for the full contract."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn


def amp_train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler,
    batch: tuple[Tensor, Tensor],
    loss_fn: Callable[[Tensor, Tensor], Tensor],
    *,
    max_grad_norm: float | None = None,
    device_type: str = "cpu",
) -> dict:
    """One mixed-precision training step on ``batch = (inputs, targets)``.

    In order: optimizer.zero_grad() (once, before the forward); the forward pass and
    ``loss_fn(model(inputs), targets)`` under torch.autocast(device_type) with bfloat16
    on "cpu", float16 on "cuda" (nothing else under autocast); backward on
    ``scaler.scale(loss)``; when max_grad_norm is given, scaler.unscale_(optimizer) then
    clip the unscaled gradients to that total L2 norm; scaler.step(optimizer) (it skips
    the step when a gradient is inf or NaN); scaler.update(). The parameters stay float32.

    Returns {"loss": the loss as a Python float (inf or NaN included), "skipped": bool,
    True when the step was skipped for non-finite gradients, "scale": the scaler's scale
    after update(), a Python float}.
    Raises ValueError naming ``max_grad_norm`` when it is <= 0, and naming ``device_type``
    when it is not "cpu" or "cuda".
    """
    raise NotImplementedError("amp_train_step")
