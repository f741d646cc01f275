"""Int8 weight-only quantised linear layer: implement QuantLinear below. See README.md for the full contract."""

from __future__ import annotations

import torch
from torch import nn


class QuantLinear(nn.Module):
    """An nn.Linear replacement holding int8 weights and one float32 scale per output row.

    Buffers (register_buffer, no nn.Parameter): weight_int8 (int8, (out, in)), scale
    (float32, (out,)), bias (float32 copy of linear.bias, or None). scale[i] is
    max |W[i, :]| / 127 (any positive finite value for an all-zero row); weight_int8 is
    round(W / scale[:, None]) clamped to [-127, 127]. No float copy of the weight is kept.
    torch.ao, torch.quantization, torch.nn.quantized and torch.quantize_per_* are forbidden.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        """An empty layer of these sizes (buffers of the right shapes and dtypes, any values)."""
        super().__init__()
        raise NotImplementedError("QuantLinear.__init__")

    @classmethod
    def from_float(cls, linear: nn.Linear) -> "QuantLinear":
        """A new QuantLinear quantising linear's weight per output row; linear is left unchanged."""
        raise NotImplementedError("QuantLinear.from_float")

    def dequantize(self) -> torch.Tensor:
        """weight_int8.float() * scale[:, None]: a new float32 (out, in) tensor."""
        raise NotImplementedError("QuantLinear.dequantize")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x @ dequantize().T + bias, computed in and returned as x's dtype (float32 or float64)."""
        raise NotImplementedError("QuantLinear.forward")
