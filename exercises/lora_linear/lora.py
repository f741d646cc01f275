"""LoRA: implement the class below. See README.md for the full contract."""

from __future__ import annotations

from torch import Tensor, nn


class LoRALinear(nn.Module):
    """A frozen nn.Linear plus a trainable low-rank update: base(x) + (alpha/r) * x @ Aᵀ @ Bᵀ.

    Attributes:
        base: the nn.Linear given (the same object, not a copy); its weight and bias
            are frozen (requires_grad False) but otherwise untouched.
        lora_A: nn.Parameter of shape (r, in_features), finite and not all zeros.
        lora_B: nn.Parameter of shape (out_features, r), zeros at construction.
    lora_A and lora_B have the base weight's dtype and device and are the only
    parameters that require grad.
    """

    def __init__(self, base: nn.Linear, r: int, alpha: float):
        """Wrap and freeze base; ValueError naming r when r < 1. scaling = alpha / r."""
        super().__init__()
        raise NotImplementedError("LoRALinear.__init__")

    def forward(self, x: Tensor) -> Tensor:
        """x (*, in_features) -> base(x) + (alpha / r) * (x @ lora_Aᵀ @ lora_Bᵀ), shape (*, out_features)."""
        raise NotImplementedError("LoRALinear.forward")

    def merge(self) -> nn.Linear:
        """A new plain nn.Linear with weight W + (alpha / r) * B @ A and the base's bias (or none).

        Leaves this layer unchanged and shares no memory with it.
        """
        raise NotImplementedError("LoRALinear.merge")
