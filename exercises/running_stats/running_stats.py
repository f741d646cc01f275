"""Running statistics as buffers: implement the module below. See README.md for the full contract."""

from __future__ import annotations

from torch import Tensor, nn


class RunningNorm(nn.Module):
    """Batch normalisation for (N, C) inputs, written from scratch.

    Parameters (learnable, returned by parameters()):
        weight: shape (C,), starts at ones.   bias: shape (C,), starts at zeros.
    Buffers (register_buffer: saved in state_dict, converted by .to(), not in parameters()):
        running_mean: float (C,), starts at zeros.   running_var: float (C,), starts at ones.
        num_batches_tracked: int64 scalar, starts at 0.
    """

    def __init__(self, num_features: int, momentum: float = 0.1, eps: float = 1e-5):
        """num_features = C; momentum in [0, 1] weights the new batch in the running update."""
        super().__init__()
        raise NotImplementedError("RunningNorm.__init__")

    def forward(self, x: Tensor) -> Tensor:
        """Normalise x of shape (N, C) per column: (x - mean) / sqrt(var + eps) * weight + bias.

        Train mode: mean and var are the batch's (biased var, divide by N; gradients flow
        through them); then, without building any autograd graph,
            running_mean = (1 - momentum) * running_mean + momentum * batch mean
            running_var  = (1 - momentum) * running_var  + momentum * UNBIASED batch var (N - 1)
        and num_batches_tracked += 1. ValueError when N < 2.
        Eval mode: mean and var are running_mean and running_var; no buffer changes.
        """
        raise NotImplementedError("RunningNorm.forward")
