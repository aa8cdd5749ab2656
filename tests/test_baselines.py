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


def test_sweep_rows_have_the_distribution_of_one_call_per_trial():
    """The sweep draws all trials' noise at once; each trial must still be distributed as one
    call of laplace_answers / gaussian_answers: two-sample KS of the max errors against one call
    per trial, which rejects a call at epsilon 0.8 instead of 1."""
    data = dp.correlated_data(dp.Domain.binary(5), 1000, rng=0)
    Q = dp.MarginalWorkload.all_kway(data.domain, 2)
    k, trials = 12, 800
    errors = baselines.max_error_sweep(Q, data, ks=[k], epsilon=1.0, delta=1e-6, trials=trials,
                                       rng=2)  # fmt: skip
    true = Q.answer(data.histogram())
    gen = np.random.default_rng(3)

    def one_call_each(eps):
        lap, gau = [], []
        for _ in range(trials):
            exact = true[gen.choice(Q.k, size=k, replace=False)]
            a = baselines.laplace_answers(exact, n=data.n, epsilon=eps, rng=gen)
            g = baselines.gaussian_answers(exact, n=data.n, epsilon=eps, delta=1e-6, rng=gen)
            lap.append(np.max(np.abs(a - exact)))
            gau.append(np.max(np.abs(g - exact)))
        return np.array(lap), np.array(gau)

    lap, gau = one_call_each(1.0)
    assert stats.ks_2samp(errors["laplace"][0], lap).pvalue > 1e-6
    assert stats.ks_2samp(errors["gaussian"][0], gau).pvalue > 1e-6
    lap, gau = one_call_each(0.8)
    assert stats.ks_2samp(errors["laplace"][0], lap).pvalue < 1e-6
    assert stats.ks_2samp(errors["gaussian"][0], gau).pvalue < 1e-6


def test_sweep_releases_lie_on_the_grid_of_one_release():
    """Each row is snapped to the grid of a k-coordinate release (not the finer grid of one
    release of all trials' answers)."""
    exact = np.random.default_rng(0).uniform(0, 1, (50, 8))
    grid = dp.mechanisms.safe_laplace_grid(8 / 100, 1.0, k=8)
    assert grid.spacing > dp.mechanisms.grid_spacing(8 / 100, 1.0, k=exact.size)
    released = dp.mechanisms._safe_laplace_noise(exact, grid, np.random.default_rng(1))
    assert released.shape == exact.shape
    assert np.all(np.mod(released, grid.spacing) == 0)
