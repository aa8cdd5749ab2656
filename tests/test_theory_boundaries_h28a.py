"""Regime boundaries of chapters 00 and 01 (issue 28): what the explorables mark."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpteach as dp
from dpteach import iterative, theory


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_ic_noise_onset_is_where_one_estimate_has_laplace_scale_alpha_over_4(delta):
    bound, alpha = 1478.3, 0.15  # B(alpha/2) of the MW DUA on 8 cells; run for 1479 rounds
    onset = theory.ic_noise_onset(bound, alpha, delta)
    eps0 = theory.ic_epsilon0(1.0, 1479, delta)  # at epsilon = 1, n = onset
    assert 1 / (onset * eps0) == pytest.approx(alpha / 4, rel=1e-12)
    explicit = 8 * 1479 / alpha if delta == 0 else 16 * math.sqrt(1479 * math.log(1e6)) / alpha
    assert onset == pytest.approx(explicit, rel=1e-12)


def test_ic_noise_onset_lies_below_the_guarantee_by_the_union_bound_factor():
    bound, k, alpha, beta = 351.0, 12, 0.3, 0.05
    factor = 2 * math.log(2 * k * 351 / beta) + math.log(2 * 351 / beta)
    ratio = theory.ic_sample_size(bound, k, alpha, 1.0, beta) / theory.ic_noise_onset(bound, alpha)
    assert ratio == pytest.approx(factor, rel=1e-12) and ratio > 1


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"bound": 0.0, "alpha": 0.1}, "bound"), ({"bound": 10.0, "alpha": -1.0}, "alpha"),
     ({"bound": 10.0, "alpha": 0.1, "delta": 1.5}, "delta")],
)  # fmt: skip
def test_ic_noise_onset_refuses_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        theory.ic_noise_onset(**kwargs)


def _final_potential_ratios(n: int, alpha: float = 0.15) -> np.ndarray:
    dom = dp.Domain.binary(3)
    W, data = dp.MarginalWorkload.all_kway(dom, 2), dp.correlated_data(dom, n, rng=3)
    ratios = []
    for seed in range(10):
        dua = iterative.MultiplicativeWeightsDUA(8, alpha=alpha / 2)
        r = iterative.iterative_construction(data, W, dua, alpha=alpha, epsilon=1.0, rng=seed)
        ratios.append(r.trace[-1].potential / r.info["initial_potential"])
    return np.array(ratios)


def test_ic_noise_onset_separates_runs_that_stall_from_runs_that_learn():
    """Chapter 01's explorable marks this boundary: a quarter of it, MW barely moves the KL
    potential (the median run keeps 90 % of it); four times it, every run removes half."""
    onset = theory.ic_noise_onset(theory.mw_mistake_bound(8, 0.075), 0.15)
    below, above = (
        _final_potential_ratios(round(onset / 4)),
        _final_potential_ratios(round(4 * onset)),
    )
    assert np.median(below) > 0.9
    assert above.max() < 0.5


@pytest.mark.parametrize(
    ("epsilon", "delta"), [(0.1, 1e-6), (1.0, 1e-6), (10.0, 1e-6), (1.0, 1e-9)]
)
def test_gaussian_beats_laplace_k_is_the_first_k_of_a_brute_force_search(epsilon, delta):
    n = 48_842
    first = next(
        k
        for k in range(1, 10_000)
        if theory.gaussian_max_error(k, n, epsilon, delta) < theory.laplace_max_error(k, n, epsilon)
    )
    assert theory.gaussian_beats_laplace_k(n, epsilon, delta) == first
    # and the Gaussian stays ahead after it (one crossing), on a coarse grid up to 10^6
    for k in np.unique(np.geomspace(first, 10**6, 40).astype(int)):
        k = int(k)
        assert theory.gaussian_max_error(k, n, epsilon, delta) < theory.laplace_max_error(
            k, n, epsilon
        )


def test_gaussian_beats_laplace_k_returns_none_beyond_k_max():
    first = theory.gaussian_beats_laplace_k(1000, 1.0, 1e-6)
    assert first > 2
    assert theory.gaussian_beats_laplace_k(1000, 1.0, 1e-6, k_max=first - 1) is None
    assert theory.gaussian_beats_laplace_k(1000, 1.0, 1e-6, k_max=first) == first
