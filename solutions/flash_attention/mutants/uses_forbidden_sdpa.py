"""Mutant: calls torch.nn.functional.scaled_dot_product_attention, which is forbidden (and, on the GPU, is
itself a fused memory-efficient kernel): the numbers and the memory are right, and no check earns credit.

Should be caught by the forbidden-API rule on every check.
"""

from __future__ import annotations

import torch.nn.functional as F


def attention_forward(q, k, v, *, causal=False, block_size=128):
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
