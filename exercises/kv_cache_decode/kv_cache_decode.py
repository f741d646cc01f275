"""KV-cache decoding: implement attend_step and top_p_sample below. See README.md for the full contract."""

from __future__ import annotations

import torch
from torch import Tensor


def attend_step(q: Tensor, k_new: Tensor, v_new: Tensor,
                cache: tuple[Tensor, Tensor] | None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
    """One decoding step of attention with a KV cache.

    q, k_new, v_new: [batch, heads, 1, head_dim], the new token's query, key and value.
    cache: None (empty) or (k_cache, v_cache), each [batch, heads, seq, head_dim].

    Returns (out, (k_cache', v_cache')): the cache with k_new / v_new appended on dim 2
    (seq + 1; from None, (k_new, v_new)), and out [batch, heads, 1, head_dim] =
    softmax(q @ K^T / sqrt(head_dim)) @ V over every key of the new cache.
    Input dtype in and out. Leave q, k_new, v_new and the given cache unchanged.
    torch.nn.functional.scaled_dot_product_attention may not be used.
    """
    raise NotImplementedError("attend_step")


def top_p_sample(logits: Tensor, top_p: float, generator: torch.Generator,
                 temperature: float = 1.0) -> Tensor:
    """Nucleus (top-p) sampling: one token per row of logits [batch, vocab].

    probs = softmax(logits / temperature). The nucleus of a row is the shortest prefix of its
    tokens ranked by probability (highest first, ties: lower index first) whose probabilities
    sum to >= top_p (the token that crosses top_p is included). Draw from the nucleus with its
    probabilities renormalised. Returns an int64 tensor [batch] of vocabulary indices.

    Use only `generator` for randomness (never the global RNG). Raise ValueError when top_p is
    not in (0, 1] (message names top_p) or temperature <= 0 (names temperature). Leave logits unchanged.
    """
    raise NotImplementedError("top_p_sample")
