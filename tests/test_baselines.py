"""The Laplace and Gaussian baselines of chapter 00."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import baselines, theory


def test_laplace_noise_has_scale_k_over_n_eps():
    k, n, eps = 50, 1000, 0.5
    noise = np.concatenate(
        [baselines.laplace_answers(np.zeros(k), n=n, epsilon=eps, rng=s) for s in range(200)]
    )
    scale = k / (n * eps)
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > 1e-6
    # the same test rejects a scale 30 % off
    assert stats.kstest(noise, stats.laplace(scale=1.3 * scale).cdf).pvalue < 1e-6


def test_gaussian_noise_has_the_calibrated_sigma():
    k, n, eps, delta = 50, 1000, 1.0, 1e-6
    noise = np.concatenate(
        [
            baselines.gaussian_answers(np.zeros(k), n=n, epsilon=eps, delta=delta, rng=s)
            for s in range(200)
        ]
    )
    sigma = dp.gaussian_sigma(math.sqrt(k) / n, eps, delta)
    assert stats.kstest(noise, stats.norm(scale=sigma).cdf).pvalue > 1e-6
    assert stats.kstest(noise, stats.norm(scale=0.7 * sigma).cdf).pvalue < 1e-6


def test_budget_is_charged_and_refusal_releases_nothing():
    budget = dp.PrivacyBudget(1.0, 1e-6)
    baselines.laplace_answers(np.zeros(3), n=10, epsilon=0.6, rng=0, budget=budget)
    gen = np.random.default_rng(0)
    before = gen.bit_generator.state
    with pytest.raises(dp.BudgetExceededError):
        baselines.gaussian_answers(
            np.zeros(3), n=10, epsilon=0.6, delta=1e-7, rng=gen, budget=budget
        )
    assert gen.bit_generator.state == before
    assert budget.spent_epsilon == pytest.approx(0.6)


def test_sweep_matches_theory_on_a_synthetic_workload():
    data = dp.correlated_data(dp.Domain.binary(6), 2000, rng=0)
    Q = dp.MarginalWorkload.all_kway(data.domain, 2)
    ks, trials = [4, 20, 60], 200
    errors = baselines.max_error_sweep(
        Q, data, ks=ks, epsilon=1.0, delta=1e-6, trials=trials, rng=1
    )
    for i, k in enumerate(ks):
        # E[max] = b H_k exactly; max of k exponentials has std <= b * pi / sqrt(6), so the mean
        # of 200 trials is within 4 standard errors with overwhelming probability.
        b = k / (data.n * 1.0)
        expected = theory.laplace_expected_max_error(k, data.n, 1.0)
        assert abs(errors["laplace"][i].mean() - expected) < 4 * b * math.pi / math.sqrt(6 * trials)
        # at most a beta = 0.05 fraction above the bounds (binomial: allow 0.05 + 4 sd)
        allowed = 0.05 + 4 * math.sqrt(0.05 * 0.95 / trials)
        assert np.mean(errors["laplace"][i] > theory.laplace_max_error(k, data.n, 1.0)) < allowed
        g_bound = theory.gaussian_max_error(k, data.n, 1.0, 1e-6)
        assert np.mean(errors["gaussian"][i] > g_bound) < allowed


def test_subset_workload():
    data = dp.correlated_data(dp.Domain.binary(4), 500, rng=3)
    Q = dp.MarginalWorkload.all_kway(data.domain, 2)
    sub = Q.subset([5, 0, 7])
    p = data.histogram()
    np.testing.assert_allclose(sub.answer(p), Q.answer(p)[[5, 0, 7]])
    np.testing.assert_allclose(sub.query(1), Q.query(0))
    assert sub.label(2) == Q.label(7)
    with pytest.raises(ValueError, match="indices"):
        Q.subset([Q.k])
    with pytest.raises(TypeError, match="indices"):
        Q.subset([0.5])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"ks": [10_000]}, ValueError, "ks"),
        ({"ks": [0]}, ValueError, "ks"),
        ({"trials": 0}, ValueError, "trials"),
        ({"epsilon": 0.0}, ValueError, "epsilon"),
    ],
)
def test_sweep_bad_input(kwargs, error, match):
    data = dp.correlated_data(dp.Domain.binary(3), 100, rng=0)
    Q = dp.MarginalWorkload.all_kway(data.domain, 1)
    args = {"ks": [2], "epsilon": 1.0, "delta": 1e-6, "trials": 2, "rng": 0} | kwargs
    with pytest.raises(error, match=match):
        baselines.max_error_sweep(Q, data, **args)
