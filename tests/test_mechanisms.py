# ruff: noqa: E501
"""Statistical tests of the basic mechanisms (fixed seeds; KS tests at level 1e-6).

Each distributional test also shows that the same test, on the same sample, rejects a noise scale
30 % off, so a pass means something.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

import dpteach as dp
from dpteach.mechanisms import _analytic_delta

LEVEL = 1e-6
N = 20_000


def _ks_accepts_only_the_right_scale(sample, dist, scale):
    assert stats.kstest(sample, dist(scale=scale).cdf).pvalue > LEVEL
    assert stats.kstest(sample, dist(scale=1.3 * scale).cdf).pvalue < LEVEL
    assert stats.kstest(sample, dist(scale=scale / 1.3).cdf).pvalue < LEVEL


def test_laplace_noise_distribution():
    out = dp.laplace(np.full(N, 0.25), sensitivity=0.02, epsilon=0.5, rng=1)
    _ks_accepts_only_the_right_scale(out - 0.25, stats.laplace, 0.02 / 0.5)


def test_laplace_is_unbiased_and_scalar_in_scalar_out():
    out = dp.laplace(np.full(N, 3.0), sensitivity=1.0, epsilon=1.0, rng=2)
    # std of Lap(1) is sqrt(2); 5 standard errors
    assert abs(out.mean() - 3.0) < 5 * math.sqrt(2 / N)
    assert isinstance(dp.laplace(3.0, sensitivity=1, epsilon=1, rng=0), float)


@pytest.mark.parametrize(
    ("epsilon", "calibration"), [(0.5, "classic"), (0.5, "analytic"), (3.0, "analytic")]
)
def test_gaussian_noise_distribution(epsilon, calibration):
    out = dp.gaussian(
        np.zeros(N), sensitivity=0.1, epsilon=epsilon, delta=1e-5, rng=3, calibration=calibration
    )
    sigma = dp.gaussian_sigma(0.1, epsilon, 1e-5, calibration=calibration)
    _ks_accepts_only_the_right_scale(out, stats.norm, sigma)


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 4.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_analytic_sigma_is_the_smallest_private_sigma(epsilon, delta):
    sigma = dp.gaussian_sigma(1.0, epsilon, delta, safe=False)
    assert _analytic_delta(sigma, 1.0, epsilon) <= delta
    assert _analytic_delta(0.99 * sigma, 1.0, epsilon) > delta
    if epsilon < 1:
        assert dp.gaussian_sigma(1.0, epsilon, delta, calibration="classic", safe=False) >= sigma
    # the default (discrete, floating-point-safe) mechanism's sigma is never below it
    assert dp.gaussian_sigma(1.0, epsilon, delta) >= sigma


@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 1e-5), (1.0, 1e-6), (2.0, 1e-4)])
def test_analytic_delta_matches_the_privacy_loss_integral(epsilon, delta):
    """delta(sigma) = E[(1 - e^{eps - L})_+] for the privacy loss L ~ N(mu, 2 mu), mu = D^2/(2 s^2):
    integrate it numerically, independently of the closed form used by gaussian_sigma."""
    sigma = dp.gaussian_sigma(1.0, epsilon, delta, safe=False)
    mu = 1 / (2 * sigma**2)
    density = stats.norm(loc=mu, scale=math.sqrt(2 * mu)).pdf
    value, _ = integrate.quad(lambda x: (1 - math.exp(epsilon - x)) * density(x), epsilon, np.inf)
    assert value == pytest.approx(delta, rel=1e-4)


def test_exponential_mechanism_matches_softmax():
    scores = np.array([0.0, 1.0, 2.0, 2.5, 0.3])
    eps, sens, draws = 1.0, 1.0, 40_000
    gen = np.random.default_rng(4)
    picks = np.array(
        [dp.exponential(scores, sensitivity=sens, epsilon=eps, rng=gen) for _ in range(draws)]
    )
    observed = np.bincount(picks, minlength=scores.size)
    right = special.softmax(eps * scores / (2 * sens))
    wrong = special.softmax(eps * scores / sens)  # the factor 2 forgotten
    assert stats.chisquare(observed, right * draws).pvalue > LEVEL
    assert stats.chisquare(observed, wrong * draws).pvalue < LEVEL


def test_sparse_noise_scales_follow_dwork_roth():
    """sigma is the scale actually used: Dwork-Roth's, plus at most 2^-10 for the safe grid."""
    s = dp.Sparse(0.0, sensitivity=0.1, epsilon=0.5, rng=0, cutoff=3)
    assert 2 * 3 * 0.1 / 0.5 <= s.sigma <= (1 + 2**-10) * 2 * 3 * 0.1 / 0.5
    above = dp.AboveThreshold(0.0, sensitivity=0.1, epsilon=0.5, rng=0)
    # T + Lap(2D/eps), nu ~ Lap(4D/eps)
    assert 2 * 0.1 / 0.5 <= above.sigma <= (1 + 2**-10) * 2 * 0.1 / 0.5


def test_above_threshold_firing_probability():
    """For a query exactly at the threshold, P[above] = P[nu >= T_hat - T] = 1/2 by symmetry;
    far above it is ~1, far below ~0."""

    def fires(value, seed):
        return dp.AboveThreshold(0.0, sensitivity=0.01, epsilon=1.0, rng=seed).test(value)

    at = np.mean([fires(0.0, s) for s in range(4000)])
    assert abs(at - 0.5) < 5 * math.sqrt(0.25 / 4000)
    assert np.mean([fires(1.0, s) for s in range(500)]) > 0.99
    assert np.mean([fires(-1.0, s) for s in range(500)]) < 0.01


def test_sparse_halts_after_cutoff_aboves_and_refuses_more():
    s = dp.Sparse(0.5, sensitivity=0.001, epsilon=1.0, rng=0, cutoff=2)
    answers = [s.test(v) for v in [0.0, 1.0, 0.0, 1.0]]
    assert answers == [False, True, False, True] and s.halted
    with pytest.raises(RuntimeError, match="halted"):
        s.test(1.0)


def test_numeric_sparse_answers_only_above_queries_with_the_right_noise():
    gen = np.random.default_rng(5)
    errors = []
    for _ in range(3000):
        ns = dp.NumericSparse(0.5, sensitivity=0.001, epsilon=1.0, rng=gen, cutoff=2)
        assert ns.test(0.0) is None
        errors.append(ns.test(1.0) - 1.0)
    assert ns.epsilon_answers == pytest.approx(2.0 / 9)
    _ks_accepts_only_the_right_scale(np.array(errors), stats.laplace, 2 * 2 * 0.001 / (2 / 9))


def test_mechanisms_charge_the_budget_before_releasing():
    budget = dp.PrivacyBudget(1.0)
    dp.laplace(0.0, sensitivity=1, epsilon=0.4, rng=0, budget=budget)
    dp.exponential([0, 1], sensitivity=1, epsilon=0.4, rng=0, budget=budget)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    for release in (
        lambda: dp.laplace(0.0, sensitivity=1, epsilon=0.4, rng=gen, budget=budget),
        lambda: dp.exponential([0, 1], sensitivity=1, epsilon=0.4, rng=gen, budget=budget),
        lambda: dp.Sparse(0, sensitivity=1, epsilon=0.4, rng=gen, budget=budget),
        lambda: dp.NumericSparse(0, sensitivity=1, epsilon=0.4, rng=gen, budget=budget),
    ):
        with pytest.raises(dp.BudgetExceededError, match="nothing was released"):
            release()
        assert gen.bit_generator.state == state  # no noise was drawn
    assert budget.spent_epsilon == pytest.approx(0.8) and len(budget.ledger) == 2


def test_same_seed_same_output():
    a = dp.laplace(np.zeros(5), sensitivity=1, epsilon=1, rng=42)
    b = dp.laplace(np.zeros(5), sensitivity=1, epsilon=1, rng=42)
    c = dp.laplace(np.zeros(5), sensitivity=1, epsilon=1, rng=43)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
