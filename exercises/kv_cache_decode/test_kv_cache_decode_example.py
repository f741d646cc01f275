"""Example tests for the kv_cache_decode exercise. Run: pytest exercises/kv_cache_decode/test_kv_cache_decode_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import torch

from kv_cache_decode import attend_step, top_p_sample


def causal_attention(q, k, v):
    """Full causal attention over a whole sequence [B, H, T, D], for comparison."""
    T, D = q.shape[-2], q.shape[-1]
    scores = q @ k.transpose(-2, -1) / D ** 0.5
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v


def test_step_by_step_equals_causal_attention():
    B, H, T, D = 2, 3, 5, 4
    q, k, v = (torch.randn(B, H, T, D) for _ in range(3))
    full = causal_attention(q, k, v)
    cache = None
    for t in range(T):
        out, cache = attend_step(q[:, :, t:t + 1], k[:, :, t:t + 1], v[:, :, t:t + 1], cache)
        assert out.shape == (B, H, 1, D)
        assert cache[0].shape == cache[1].shape == (B, H, t + 1, D)
        torch.testing.assert_close(out, full[:, :, t:t + 1])
    torch.testing.assert_close(cache[0], k)
    torch.testing.assert_close(cache[1], v)


def test_top_p_keeps_the_token_that_crosses_the_threshold():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]]).expand(1000, -1)   # probs ~ [0.64, 0.24, 0.09, 0.03]
    tokens = top_p_sample(logits, 0.8, torch.Generator().manual_seed(0))
    assert tokens.dtype == torch.long and tokens.shape == (1000,)
    assert set(tokens.tolist()) == {0, 1}       # 0.64 < 0.8, 0.64 + 0.24 >= 0.8: token 1 is in


def test_same_seed_same_tokens():
    logits = torch.randn(8, 10)
    a = top_p_sample(logits, 0.9, torch.Generator().manual_seed(3))
    b = top_p_sample(logits, 0.9, torch.Generator().manual_seed(3))
    assert torch.equal(a, b)
