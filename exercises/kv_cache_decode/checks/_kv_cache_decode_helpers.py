"""Judge-side helpers for the kv_cache_decode checks: cases, the judge's own answers, result checks.

The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from hypothesis import strategies as st
from torch import Tensor

from grader.judge import Tolerance, Tolerances, call, expect_close, expect_returned, expect_tensor, seeds

#: The README's tolerances: float32 1e-4 (any order of summation), float64 1e-10 (really computed in float64).
TOL = Tolerances(float32=Tolerance(atol=1e-4, rtol=1e-4), float64=Tolerance(atol=1e-10, rtol=1e-10))

#: The README's margin: a token is in the nucleus when it is in the nucleus of top_p + MARGIN.
MARGIN = 1e-4

# ------------------------------------------------------------------ attend_step


@dataclass(frozen=True)
class StepCase:
    batch: int
    heads: int
    head_dim: int
    tokens: int      # tokens fed from an empty cache (decode), or new tokens from one given cache
    prefix: int      # the given cache's length (step_from_cache); 0 for decode
    seed: int

    def tensors(self, dtype=torch.float32) -> dict:
        """q, k, v [B, H, prefix + tokens, D], drawn from the seed."""
        g = torch.Generator().manual_seed(self.seed)
        shape = (self.batch, self.heads, self.prefix + self.tokens, self.head_dim)
        return {name: torch.randn(shape, generator=g, dtype=torch.float64).to(dtype) for name in ("q", "k", "v")}

    def describe(self) -> str:
        where = f"a given cache of seq {self.prefix}" if self.prefix else "cache=None"
        return (f"batch={self.batch}, heads={self.heads}, head_dim={self.head_dim}, "
                f"{self.tokens} token(s) from {where}")


@st.composite
def step_cases(draw, *, given_cache: bool = False) -> StepCase:
    return StepCase(
        batch=draw(st.integers(1, 2)),
        heads=draw(st.integers(1, 3)),
        head_dim=draw(st.integers(1, 8)),
        tokens=draw(st.integers(1, 6)) if not given_cache else draw(st.integers(1, 2)),
        prefix=draw(st.integers(1, 6)) if given_cache else 0,
        seed=draw(seeds()),
    )


#: Tried every run: several heads, head_dim 4 (so a missing 1/sqrt(head_dim) shows), several steps.
DECODE = StepCase(batch=2, heads=3, head_dim=4, tokens=5, prefix=0, seed=1)
SINGLE_HEAD = StepCase(batch=1, heads=1, head_dim=8, tokens=4, prefix=0, seed=2)
FROM_CACHE = StepCase(batch=2, heads=2, head_dim=4, tokens=2, prefix=4, seed=3)


def attention_row(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """softmax(q kᵀ / √D) v for one query row q [B, H, 1, D] over k, v [B, H, S, D], in float64."""
    q, k, v = q.double(), k.double(), v.double()
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v


def causal_row(t: dict, step: int) -> Tensor:
    """Row ``step`` of full causal attention over the whole sequence: query ``step`` over keys 0..step."""
    return attention_row(t["q"][:, :, step:step + 1], t["k"][:, :, :step + 1], t["v"][:, :, :step + 1])


def decode(sandbox, case: StepCase, dtype=torch.float32) -> tuple[dict, dict]:
    t = case.tensors(dtype)
    result = call(sandbox, "decode", t["q"], t["k"], t["v"])
    return expect_returned(result, function="attend_step(q, k_new, v_new, cache)",
                           returns="a pair (out, cache)"), t


def step_from_cache(sandbox, case: StepCase, dtype=torch.float32) -> tuple[dict, dict]:
    """One step per new token, each from the same given cache of case.prefix tokens."""
    t = case.tensors(dtype)
    p = case.prefix
    tokens = [[t[n][:, :, p + i:p + i + 1].clone() for n in ("q", "k", "v")] for i in range(case.tokens)]
    result = call(sandbox, "step_from_cache", t["k"][:, :, :p].clone(), t["v"][:, :, :p].clone(), tokens)
    return expect_returned(result, function="attend_step(q, k_new, v_new, cache)",
                           returns="a pair (out, cache)"), t


def step_output(value, case: StepCase, what: str, dtype=torch.float32) -> Tensor:
    return expect_tensor(value, shape=(case.batch, case.heads, 1, case.head_dim), dtype=dtype, name=what)


def cache_pair(value, case: StepCase, seq: int, what: str, dtype=torch.float32) -> tuple[Tensor, Tensor]:
    """The two tensors of a returned cache, each [B, H, seq, D] of ``dtype``."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        got = getattr(value, "type_name", type(value).__name__)
        raise AssertionError(f"{what}: expected the pair (k_cache, v_cache), got {got} ({case.describe()})")
    shape = (case.batch, case.heads, seq, case.head_dim)
    k = expect_tensor(value[0], shape=shape, dtype=dtype, name=f"k_cache of {what} ({case.describe()})")
    v = expect_tensor(value[1], shape=shape, dtype=dtype, name=f"v_cache of {what} ({case.describe()})")
    return k, v


def close(actual: Tensor, expected: Tensor, what: str, case: StepCase) -> None:
    expect_close(actual, expected.to(actual.dtype), f"{what} ({case.describe()})", tol=TOL)


# ------------------------------------------------------------------ top_p_sample

TEMPERATURES = (None, 0.5, 1.0, 2.0)   # None: the argument is not passed (the default, 1.0)


@dataclass(frozen=True)
class SampleCase:
    batch: int
    vocab: int
    top_p: float
    temperature: float | None
    seed: int           # the logits: multiples of 0.25 in [-spread/4, spread/4]
    generator_seed: int
    spread: int = 12    # small: many exact ties

    def logits(self) -> Tensor:
        g = torch.Generator().manual_seed(self.seed)
        s = self.spread
        return torch.randint(-s, s + 1, (self.batch, self.vocab), generator=g).to(torch.float32) / 4

    def kwargs(self) -> dict:
        return {} if self.temperature is None else {"temperature": self.temperature}

    def describe(self) -> str:
        temp = "" if self.temperature is None else f", temperature={self.temperature}"
        return f"logits [{self.batch}, {self.vocab}], top_p={self.top_p}{temp}"


@st.composite
def sample_cases(draw, *, ties: bool = False) -> SampleCase:
    return SampleCase(
        batch=draw(st.integers(1, 16)),
        # Ties: short rows and rows past 16 tokens, where torch's CPU sort stops being an insertion sort and an
        # unstable sort (stable=False, the default) reorders equal probabilities.
        vocab=draw(st.integers(2, 8) | st.integers(17, 24)) if ties else draw(st.integers(2, 24)),
        top_p=draw(st.sampled_from((0.01, 0.1, 0.25, 0.5, 0.7, 0.9, 0.95, 1.0))
                   | st.floats(0.01, 1.0).map(lambda x: round(x, 3))),
        temperature=draw(st.sampled_from(TEMPERATURES)),
        seed=draw(seeds()),
        generator_seed=draw(seeds()),
        spread=2 if ties else 12,
    )


def probabilities(logits: Tensor, temperature: float | None) -> Tensor:
    """softmax(logits / temperature) in float64 (exact division: temperature is a power of 2)."""
    return torch.softmax(logits.double() / (1.0 if temperature is None else temperature), dim=-1)


def nucleus(probs: Tensor, top_p: float) -> Tensor:
    """bool [B, V]: each row's nucleus for ``top_p`` (ties: lower index first; the crossing token included)."""
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    before = sorted_probs.cumsum(-1) - sorted_probs           # what the tokens ranked above sum to
    keep_sorted = before < top_p  # nan-safe: the judge's own float64 probabilities
    keep_sorted[..., 0] = True
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


def allowed(logits: Tensor, top_p: float, temperature: float | None) -> Tensor:
    """The README's margin: the nucleus of top_p + 1e-4 (all tokens from 1 on)."""
    return nucleus(probabilities(logits, temperature), top_p + MARGIN)


def tokens(value, batch: int, what: str) -> Tensor:
    return expect_tensor(value, shape=(batch,), dtype=torch.int64, name=what)


def expect_in_nucleus(got: Tensor, logits: Tensor, top_p: float, temperature: float | None, what: str) -> None:
    """Every token is a vocabulary index in its row's nucleus (with the README's margin)."""
    batch, vocab = logits.shape
    outside_vocab = (got < 0) | (got >= vocab)
    if bool(outside_vocab.any()):
        row = int(outside_vocab.nonzero()[0, 0])
        raise AssertionError(f"{what}: row {row} got token {int(got[row])}, not an index of a vocabulary of {vocab}")
    ok = allowed(logits, top_p, temperature)
    hit = ok.gather(-1, got[:, None]).squeeze(-1)
    if not bool(hit.all()):
        row = int((~hit).nonzero()[0, 0])
        probs = probabilities(logits[row:row + 1], temperature)[0]
        members = ok[row].nonzero().flatten().tolist()
        raise AssertionError(
            f"{what}: row {row} drew token {int(got[row])} (probability {float(probs[got[row]]):.4f}), outside "
            f"its nucleus {members}; the row's logits are {logits[row].tolist()}, probabilities "
            f"{[round(p, 4) for p in probs.tolist()]}")


#: Tried every run by the membership check: a top_p below every top probability (greedy: the most likely
#: token only, ties to the lower index); temperature 0.5 (ignoring it widens the nucleus); a wide vocabulary.
GREEDY = SampleCase(batch=16, vocab=10, top_p=0.01, temperature=None, seed=5, generator_seed=0)
SHARPENED = SampleCase(batch=16, vocab=12, top_p=0.6, temperature=0.5, seed=6, generator_seed=1)
WIDE = SampleCase(batch=16, vocab=24, top_p=0.9, temperature=None, seed=7, generator_seed=2)
#: Exact ties across the boundary: four equal logits and top_p 0.4 keep tokens 0 and 1 (0.25 + 0.25 >= 0.4).
FLAT = SampleCase(batch=16, vocab=4, top_p=0.4, temperature=None, seed=0, generator_seed=3, spread=0)
#: The same past 16 tokens, where torch's unstable CPU sort puts equal values out of index order: twenty equal
#: logits and top_p 0.1 keep tokens 0, 1 and 2 (the third crosses 0.1 within the margin).
FLAT_WIDE = SampleCase(batch=16, vocab=20, top_p=0.1, temperature=None, seed=0, generator_seed=4, spread=0)
#: Five logit values over 20 tokens: ties in every rank, the nucleus boundary inside a tie on most rows.
TIED_WIDE = SampleCase(batch=16, vocab=20, top_p=0.5, temperature=None, seed=8, generator_seed=5, spread=2)


@dataclass(frozen=True)
class FrequencyCase:
    """One distribution, repeated on ``rows`` rows; its tokens shuffled in the vocabulary by ``perm_seed``.

    ``top_p`` is at least 0.03 from every partial sum of the ranked probabilities, so rounding never
    decides the nucleus.
    """

    logits: tuple[float, ...]   # in ranked order, before the shuffle
    top_p: float
    temperature: float | None
    perm_seed: int
    rows: int = 3000

    def row(self) -> Tensor:
        g = torch.Generator().manual_seed(self.perm_seed)
        perm = torch.randperm(len(self.logits), generator=g)
        return torch.tensor(self.logits, dtype=torch.float32)[perm]

    def describe(self) -> str:
        temp = "" if self.temperature is None else f", temperature={self.temperature}"
        return f"logits {self.row().tolist()} on {self.rows} rows, top_p={self.top_p}{temp}"


FREQUENCY_CASES = (
    # probs ~ [.321, .250, .195, .118, .072, .044]: partial sums .32, .57, .77; the nucleus is 3 tokens
    # (the crossing one, .195, included), renormalised to [.419, .327, .254].
    FrequencyCase((0.0, -0.25, -0.5, -1.0, -1.5, -2.0), top_p=0.7, temperature=None, perm_seed=11),
    # The same probabilities through temperature 2: ignoring it leaves only 2 tokens in the nucleus.
    FrequencyCase((0.0, -0.5, -1.0, -2.0, -3.0, -4.0), top_p=0.7, temperature=2.0, perm_seed=12),
    # Temperature 0.5: probs ~ [.414, .251, .152, .092, .056, .034], partial sums .41, .67, .82, .91; top_p .88
    # keeps 4 tokens (ignoring the temperature keeps 5).
    FrequencyCase((0.0, -0.25, -0.5, -0.75, -1.0, -1.25), top_p=0.88, temperature=0.5, perm_seed=13),
    # top_p = 1: every token, with ties, at its own probability.
    FrequencyCase((0.5, 0.5, 0.0, -0.5), top_p=1.0, temperature=None, perm_seed=14),
)

#: Standard deviations a frequency may stray from its probability (README: "within 6 standard deviations").
SIGMAS = 6.0


def expected_frequencies(case: FrequencyCase) -> Tensor:
    """Each token's probability under the README's rule, in float64: renormalised in the nucleus, 0 outside."""
    probs = probabilities(case.row()[None], case.temperature)
    inside = nucleus(probs, case.top_p)
    kept = torch.where(inside, probs, torch.zeros_like(probs))
    return (kept / kept.sum(-1, keepdim=True))[0]
