"""RMSNorm and rotary position embeddings: implement both modules. See README.md for the full contract."""

from __future__ import annotations

import torch
from torch import Tensor, nn


class RMSNorm(nn.Module):
    """y = x / sqrt(mean(x**2, dim=-1, keepdim=True) + eps) * weight  (eps inside the sqrt).

    weight: an nn.Parameter of shape (dim,), initialised to ones, the only parameter.
    The output has x's shape and dtype; x is never changed in place.
    torch.nn.RMSNorm and torch.nn.functional.rms_norm may not be used.
    """

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        raise NotImplementedError("RMSNorm.__init__")

    def forward(self, x: Tensor) -> Tensor:
        raise NotImplementedError("RMSNorm.forward")


class RotaryEmbedding(nn.Module):
    """Rotary position embeddings, "rotate half" convention (GPT-NeoX / Llama).

    ValueError at construction when head_dim is odd; the message contains the value.
    forward(q, k, v, positions=None) -> (q_rot, k_rot, v):
      q (batch, heads, seq, head_dim), k (batch, kv_heads, seq, head_dim), v (batch, kv_heads, seq, v_dim);
      positions None = 0..seq-1, else a 1-D int64 tensor of seq positions.
      With h = head_dim // 2 and theta_i = base ** (-2i / head_dim), the pair (x[i], x[i+h]) at
      position p is rotated by the angle p * theta_i:
        out[i]   = x[i]   * cos - x[i+h] * sin
        out[i+h] = x[i+h] * cos + x[i]   * sin
      q and k are rotated, v is returned unchanged; inputs are never changed in place.
      float64 in: computed in float64 (frequencies included).
    """

    def __init__(self, head_dim: int, base: float = 10000.0):
        super().__init__()
        raise NotImplementedError("RotaryEmbedding.__init__")

    def forward(self, q: Tensor, k: Tensor, v: Tensor, positions: Tensor | None = None
                ) -> tuple[Tensor, Tensor, Tensor]:
        raise NotImplementedError("RotaryEmbedding.forward")
