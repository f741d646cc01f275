"""Kolmogorov-Smirnov distances: small for a sample of the law, large otherwise, NaN for NaN."""

import math

import torch

from grader.judge import ks_normal, ks_threshold, ks_uniform


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
