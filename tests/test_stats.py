"""Kolmogorov-Smirnov distances: small for a sample of the law, large otherwise, NaN for NaN."""

import math

import pytest
import torch

from grader.judge import expect_fits, ks_normal, ks_threshold, ks_uniform


def test_a_sample_of_the_law_is_under_the_threshold_and_another_law_is_not():
    g = torch.Generator().manual_seed(0)
    n = 20_000
    uniform, normal = torch.rand(n, generator=g) * 2 - 1, torch.randn(n, generator=g)
    limit = ks_threshold(n)
    assert ks_uniform(uniform) < limit and ks_normal(normal) < limit
    assert ks_uniform(uniform * 0.9) > limit and ks_normal(normal * 1.1) > limit
    assert ks_uniform(normal) > limit and ks_normal(uniform) > limit


def test_the_distance_of_a_point_mass_is_one_half():
    assert ks_uniform(torch.zeros(1000)) == 0.5 and ks_normal(torch.zeros(1000)) == 0.5


def test_nan_stays_nan():
    assert math.isnan(ks_uniform(torch.tensor([0.1, float("nan")])))
    assert math.isnan(ks_normal(torch.tensor([float("nan"), 0.0])))


def test_the_threshold_shrinks_like_one_over_root_n():
    assert ks_threshold(100) > ks_threshold(10_000) > ks_threshold(1_000_000) > 1e-4
    assert math.isclose(ks_threshold(10_000, alpha=2 * math.exp(-2)) - 1e-4, 0.01)


def test_expect_fits_passes_a_sample_of_the_law_and_fails_another_naming_the_sample_size():
    g = torch.Generator().manual_seed(1)
    uniform = torch.rand(5000, generator=g) * 2 - 1
    expect_fits(uniform, ks_uniform, name="u", note="a note")
    expect_fits(torch.randn(5000, generator=g), ks_normal, name="z", note="a note")
    with pytest.raises(AssertionError, match=r"u.*over 5000 values; a note"):
        expect_fits(uniform * 0.9, ks_uniform, name="u", note="a note")


def test_expect_fits_takes_the_threshold_of_the_sample_measured():
    """A distance over the threshold of a larger sample but under this one's passes, and a sample
    that large at the same distance fails: the threshold is the one for the values measured."""
    small, large = torch.linspace(-1, 1, 100) * 0.9, torch.linspace(-1, 1, 10_000) * 0.9  # both 0.05 away
    assert ks_threshold(10_000) < ks_uniform(small) < ks_threshold(100)
    expect_fits(small, ks_uniform, name="u", note="")
    with pytest.raises(AssertionError, match="over 10000 values"):
        expect_fits(large, ks_uniform, name="u", note="")


def test_expect_fits_fails_on_nan():
    with pytest.raises(AssertionError, match="u"):
        expect_fits(torch.tensor([0.1, float("nan")] * 50), ks_uniform, name="u", note="")
