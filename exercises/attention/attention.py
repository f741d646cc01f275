"""Attention: implement the two pieces below. See README.md for the full contract.

Do not use torch.nn.functional.scaled_dot_product_attention,
torch.nn.MultiheadAttention or torch.nn.functional.multi_head_attention_forward.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """Scaled dot-product attention.

    Args:
        q: queries, shape (..., L, E).
        k: keys, shape (..., S, E).
        v: values, shape (..., S, Ev). The leading dims of q, k and v are identical.
        mask: optional bool tensor broadcastable to (..., L, S).
            True = the query may attend to that key, False = blocked.

    Returns:
        (out, weights): weights (..., L, S) is the softmax over S of q·kᵀ/√E with
        blocked positions exactly 0 (a query row whose keys are all blocked gets
        all-zero weights); out = weights @ v, shape (..., L, Ev). Same dtype as
        the inputs, never NaN, differentiable in q, k and v.
    """
    raise NotImplementedError("scaled_dot_product_attention")


class MultiHeadAttention(nn.Module):
    """Multi-head attention with projections W_q, W_k, W_v, W_o.

    Each projection is nn.Linear(d_model, d_model, bias=bias); the module has no
    other parameters. Head h uses features [h*d_head, (h+1)*d_head) of each
    projection, where d_head = d_model // n_heads.
    """

    def __init__(self, d_model: int, n_heads: int, bias: bool = True):
        """Raise ValueError (naming the argument) if n_heads < 1 or d_model % n_heads != 0."""
        super().__init__()
        raise NotImplementedError("MultiHeadAttention.__init__")

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """Attend from query to key/value.

        Args:
            query: (B, L, d_model).
            key: (B, S, d_model).
            value: (B, S, d_model); may differ from key (cross-attention).
            mask: None, a bool (L, S) tensor, or a bool 4-D tensor broadcastable
                to (B, n_heads, L, S), e.g. (B, 1, 1, S) for key padding.
                True = may attend.

        Returns:
            (out, weights): out (B, L, d_model) is W_o applied to the concatenated
            heads; weights (B, n_heads, L, S) are each head's attention weights.
        """
        raise NotImplementedError("MultiHeadAttention.forward")
