"""Example tests for the attention exercise. Run: pytest exercises/attention/test_attention_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import math

import torch
from torch import nn

from attention import MultiHeadAttention, scaled_dot_product_attention


def test_one_query_two_keys_by_hand():
    q = torch.tensor([[1.0, 0.0]])  # L=1, E=2
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0]])  # S=2
    v = torch.tensor([[10.0], [20.0]])  # Ev=1

    out, weights = scaled_dot_product_attention(q, k, v)

    # scores = q·kᵀ/√2 = [1/√2, 0]; softmax of those:
    a, b = math.exp(1 / math.sqrt(2)), math.exp(0.0)
    expected = torch.tensor([[a / (a + b), b / (a + b)]])
    torch.testing.assert_close(weights, expected)
    torch.testing.assert_close(out, expected @ v)


def test_mask_blocks_keys_and_empty_rows_are_zero():
    q = torch.randn(2, 3, 4)
    k = torch.randn(2, 5, 4)
    v = torch.randn(2, 5, 6)
    mask = torch.ones(3, 5, dtype=torch.bool)  # (L, S), broadcast over the batch
    mask[0, 3:] = False  # query 0 may not see keys 3 and 4
    mask[2, :] = False  # query 2 may see nothing

    out, weights = scaled_dot_product_attention(q, k, v, mask)

    assert out.shape == (2, 3, 6) and weights.shape == (2, 3, 5)
    assert (weights[:, 0, 3:] == 0).all()  # exactly zero
    torch.testing.assert_close(weights[:, :2].sum(-1), torch.ones(2, 2))
    assert (weights[:, 2] == 0).all() and (out[:, 2] == 0).all()  # no NaN
    assert not out.isnan().any()


def test_multi_head_attention_matches_pytorch():
    torch.manual_seed(0)
    d_model, n_heads = 8, 2
    mine = MultiHeadAttention(d_model, n_heads)
    theirs = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([mine.W_q.weight, mine.W_k.weight, mine.W_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([mine.W_q.bias, mine.W_k.bias, mine.W_v.bias]))
        theirs.out_proj.weight.copy_(mine.W_o.weight)
        theirs.out_proj.bias.copy_(mine.W_o.bias)

    x = torch.randn(2, 3, d_model)  # queries
    memory = torch.randn(2, 5, d_model)  # keys and values: cross-attention
    padding = torch.tensor([[True] * 5, [True, True, True, False, False]])
    mask = padding[:, None, None, :]  # (B, 1, 1, S): True = real token

    out, weights = mine(x, memory, memory, mask)
    expected_out, expected_weights = theirs(
        x, memory, memory,
        attn_mask=(~mask).expand(2, n_heads, 3, 5).reshape(2 * n_heads, 3, 5),
        average_attn_weights=False,
    )
    torch.testing.assert_close(out, expected_out, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(weights, expected_weights, atol=1e-5, rtol=1e-4)
    assert sorted(name for name, _ in mine.named_parameters()) == sorted(
        f"{p}.{t}" for p in ("W_q", "W_k", "W_v", "W_o") for t in ("weight", "bias")
    )
