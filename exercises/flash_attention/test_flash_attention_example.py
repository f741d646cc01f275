"""Example tests for the flash_attention exercise. Run: pytest exercises/flash_attention/test_flash_attention_example.py

Examples to read and run while you work, not the grade (see README.md). They use the GPU when there is
one and the CPU otherwise: the algorithm is the same on both.
"""

import torch

from flash_attention import attention_forward

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def plain_attention(q, k, v, causal=False):
    scores = (q.double() @ k.double().transpose(-2, -1)) / q.shape[-1] ** 0.5
    if causal:
        lq, lk = scores.shape[-2:]
        mask = torch.ones(lq, lk, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v.double()).to(q.dtype)


def test_matches_plain_attention_with_uneven_blocks():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 37, 8, generator=g).to(DEVICE) for _ in range(3))
    out = attention_forward(q, k, v, block_size=10)  # blocks of 10, 10, 10 and 7 keys
    torch.testing.assert_close(out, plain_attention(q, k, v), atol=1e-4, rtol=1e-4)


def test_causal_with_fewer_queries_than_keys():
    g = torch.Generator().manual_seed(1)
    q = torch.randn(1, 1, 5, 4, generator=g).to(DEVICE)
    k, v = (torch.randn(1, 1, 20, 4, generator=g).to(DEVICE) for _ in range(2))
    out = attention_forward(q, k, v, causal=True, block_size=4)
    torch.testing.assert_close(out, plain_attention(q, k, v, causal=True), atol=1e-4, rtol=1e-4)
    assert torch.isfinite(out).all()
