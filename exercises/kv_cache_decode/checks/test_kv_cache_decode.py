"""Checks for attend_step(q, k_new, v_new, cache) and top_p_sample(logits, top_p, generator, temperature)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import example, given

from _kv_cache_decode_helpers import (
    DECODE,
    FLAT,
    FLAT_WIDE,
    FREQUENCY_CASES,
    FROM_CACHE,
    GREEDY,
    SHARPENED,
    SIGMAS,
    SINGLE_HEAD,
    TIED_WIDE,
    WIDE,
    SampleCase,
    attention_row,
    cache_pair,
    causal_row,
    close,
    decode,
    expect_in_nucleus,
    expected_frequencies,
    sample_cases,
    step_cases,
    step_from_cache,
    step_output,
    tokens,
)
from grader.judge import call, candidate_raises, expect_bounded, expect_equal, seeds

# ------------------------------------------------------------------ attend_step


@pytest.mark.points(3)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Append k_new and v_new to the cache on the seq dim (dim 2), then attend the new query over "
                  "every cached key: softmax(q @ K^T / sqrt(head_dim)) @ V.")
@given(case=step_cases())
@example(case=DECODE)
@example(case=SINGLE_HEAD)
def test_decode_matches_causal_attention(sandbox, case):
    """Fed one token at a time from an empty cache, each step's output is that row of full causal attention"""
    result, t = decode(sandbox, case)
    for step, out in enumerate(result["outs"]):
        got = step_output(out, case, f"out of step {step}")
        close(got, causal_row(t, step), f"out of step {step} (query {step} over keys 0..{step})", case)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Return (k_cache, v_cache) with the new token appended on dim 2: [batch, heads, seq + 1, "
                  "head_dim]; from cache=None, (k_new, v_new). Keep the keys and values exactly as given.")
@given(case=step_cases())
@example(case=DECODE)
def test_cache_grows_by_one_token(sandbox, case):
    """The returned cache is (k_cache, v_cache), [batch, heads, seq, head_dim], one token longer each step"""
    result, t = decode(sandbox, case)
    for step, cache in enumerate(result["caches"]):
        what = f"the cache returned by step {step}"
        k, v = cache_pair(cache, case, step + 1, what)
        expect_equal(k, t["k"][:, :, :step + 1], name=f"k_cache of {what} (the keys of tokens 0..{step}, exactly)")
        expect_equal(v, t["v"][:, :, :step + 1], name=f"v_cache of {what} (the values of tokens 0..{step}, exactly)")


@pytest.mark.points(2)
@given(case=step_cases(given_cache=True))
@example(case=FROM_CACHE)
def test_step_from_a_given_cache(sandbox, case):
    """A step from a given cache attends over the cached tokens and the new one, and returns the cache + 1"""
    result, t = step_from_cache(sandbox, case)
    p = case.prefix
    for i, (out, cache) in enumerate(zip(result["outs"], result["caches"])):
        what = f"the step of new token {i} from the given cache"
        keys = torch.cat([t["k"][:, :, :p], t["k"][:, :, p + i:p + i + 1]], dim=2)
        values = torch.cat([t["v"][:, :, :p], t["v"][:, :, p + i:p + i + 1]], dim=2)
        want = attention_row(t["q"][:, :, p + i:p + i + 1], keys, values)
        close(step_output(out, case, f"out of {what}"), want, f"out of {what}", case)
        k, v = cache_pair(cache, case, p + 1, what)
        expect_equal(k, keys, name=f"k_cache returned by {what} (the given keys, then k_new)")
        expect_equal(v, values, name=f"v_cache returned by {what} (the given values, then v_new)")


@pytest.mark.points(1)
@given(case=step_cases())
@example(case=DECODE)
def test_step_float64(sandbox, case):
    """float64 in gives float64 out, output and cache, at float64 precision"""
    result, t = decode(sandbox, case, torch.float64)
    for step, (out, cache) in enumerate(zip(result["outs"], result["caches"])):
        got = step_output(out, case, f"out of step {step} in float64", torch.float64)
        close(got, causal_row(t, step), f"out of step {step} in float64", case)
        cache_pair(cache, case, step + 1, f"the cache returned by step {step} in float64", torch.float64)


@pytest.mark.points(1)
@given(case=step_cases(given_cache=True))
@example(case=FROM_CACHE)
def test_step_leaves_arguments_alone(sandbox, case):
    """attend_step changes none of its arguments in place: q, k_new, v_new and the given cache"""
    result, t = step_from_cache(sandbox, case)
    p = case.prefix
    expect_equal(result["k_cache"], t["k"][:, :, :p], name=f"the given k_cache after the calls ({case.describe()})")
    expect_equal(result["v_cache"], t["v"][:, :, :p], name=f"the given v_cache after the calls ({case.describe()})")
    for i, after in enumerate(result["after"]):
        for name, full in (("q", "q"), ("k_new", "k"), ("v_new", "v")):
            expect_equal(after[name], t[full][:, :, p + i:p + i + 1],
                         name=f"{name} after attend_step ({case.describe()})", note="changed in place")


# ------------------------------------------------------------------ top_p_sample


def _sample(sandbox, case: SampleCase) -> tuple[torch.Tensor, dict]:
    logits = case.logits()
    result = call(sandbox, "sample", logits, case.top_p, case.generator_seed, **case.kwargs())
    return logits, result


@pytest.mark.points(3)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Sort each row's probabilities, highest first (ties: lower index first), keep the shortest "
                  "prefix whose sum reaches top_p (the crossing token included), and return vocabulary indices "
                  "(map sorted positions back through the sort's indices).")
@given(case=sample_cases())
@example(case=GREEDY)
@example(case=SHARPENED)
@example(case=WIDE)
def test_samples_stay_in_the_nucleus(sandbox, case):
    """Every token drawn is a vocabulary index in its row's nucleus (a long tensor [batch])"""
    logits, result = _sample(sandbox, case)
    got = tokens(result["tokens"], case.batch, f"top_p_sample({case.describe()})")
    expect_in_nucleus(got, logits, case.top_p, case.temperature, f"top_p_sample({case.describe()})")


@pytest.mark.points(1)
@given(case=sample_cases(ties=True))
@example(case=FLAT)
@example(case=FLAT_WIDE)
@example(case=TIED_WIDE)
def test_ties_rank_lower_index_first(sandbox, case):
    """Equal probabilities rank by lower token index first when the nucleus splits them"""
    logits, result = _sample(sandbox, case)
    got = tokens(result["tokens"], case.batch, f"top_p_sample({case.describe()})")
    expect_in_nucleus(got, logits, case.top_p, case.temperature, f"top_p_sample({case.describe()}), with ties")


@pytest.mark.points(2)
def test_frequencies_follow_the_renormalised_nucleus(sandbox):
    """Over thousands of rows, each token is drawn at its probability renormalised in the nucleus"""
    for n, case in enumerate(FREQUENCY_CASES):
        row = case.row()
        logits = row[None].expand(case.rows, -1).contiguous()
        kwargs = {} if case.temperature is None else {"temperature": case.temperature}
        result = call(sandbox, "sample", logits, case.top_p, 100 + n, **kwargs)
        got = tokens(result["tokens"], case.rows, f"top_p_sample({case.describe()})")
        expect_in_nucleus(got, logits[:1].expand(case.rows, -1), case.top_p, case.temperature,
                          f"top_p_sample({case.describe()})")
        counts = torch.bincount(got, minlength=row.numel())
        want = expected_frequencies(case)
        for token, (count, p) in enumerate(zip(counts.tolist(), want.tolist())):
            what = (f"top_p_sample({case.describe()}): token {token} was drawn {count} times "
                    f"({count / case.rows:.4f}), expected probability {p:.4f}")
            if p == 0:
                expect_equal(count, 0, name=what, note="outside the nucleus")
                continue
            sigma = math.sqrt(p * (1 - p) / case.rows)
            expect_bounded(abs(count / case.rows - p) / sigma, at_most=SIGMAS,
                           name=f"{what}; standard deviations off")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Pass the generator to every random call (torch.multinomial(p, 1, generator=generator)) "
                  "and never use or reseed the global RNG.")
@given(seed=seeds(bits=31))
def test_reproducible_from_the_generator(sandbox, seed):
    """The same generator seed gives the same tokens, another seed others, and the global RNG is untouched"""
    logits = torch.tensor([[0.0, 0.0, -0.25, -0.25, -0.5, -0.5, -0.75, -1.0]]).expand(32, -1).contiguous()
    result = call(sandbox, "sample_reproducibly", logits, 0.9, seed, 3)
    runs = result["runs"]
    what = "top_p_sample on 32 rows of 8 tokens, top_p=0.9, 3 calls per generator"
    if not isinstance(runs, list) or len(runs) != 3:
        raise AssertionError(f"probe 'sample_reproducibly' returned {type(runs).__name__}, expected 3 runs")
    runs = [[tokens(t, 32, f"{what}: tokens of call {i}") for i, t in enumerate(run)] for run in runs]
    expect_equal(runs[1], runs[0], name=f"{what}: a second generator with the same seed",
                 note="the same seed must give the same tokens, whatever the global RNG's state")
    if all(bool(torch.equal(a, b)) for a, b in zip(runs[0], runs[2])):
        raise AssertionError(f"{what}: a generator with another seed gave exactly the same tokens; "
                             "the draws must come from the generator passed in")
    for i, (before, after) in enumerate(zip(result["rng_before"], result["rng_after"])):
        expect_equal(after, before, name=f"{what}: the global RNG's state after run {i}",
                     note="top_p_sample must not use or reseed the global RNG")


@pytest.mark.points(1)
@given(case=sample_cases())
@example(case=SHARPENED)
def test_sampler_leaves_logits_alone(sandbox, case):
    """top_p_sample does not change logits in place"""
    logits, result = _sample(sandbox, case)
    expect_equal(result["logits_after"], logits, name=f"logits after top_p_sample({case.describe()})",
                 note="changed in place")


@pytest.mark.points(1)
def test_sampler_rejects_bad_arguments(sandbox):
    """ValueError naming top_p when it is not in (0, 1], naming temperature when it is <= 0"""
    for top_p in (0.0, -0.5, 1.5):
        with candidate_raises("ValueError", match="top_p", what=f"top_p_sample(logits, top_p={top_p}, g)"):
            sandbox.call("sample_bad", top_p, 1.0)
    for temperature in (0.0, -1.0):
        with candidate_raises("ValueError", match="temperature",
                              what=f"top_p_sample(logits, 0.9, g, temperature={temperature})"):
            sandbox.call("sample_bad", 0.9, temperature)
