"""Regime boundaries of chapters 02 and 03 (issue 28): where the median mechanism's premise and its
private noise margins are guaranteed, and where the projection starts to help."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpteach import median, theory


def test_median_premise_eta_is_attained_and_sufficient():
    """Below the rounding bound some sample has no candidate within eta/4 on some query; at it,
    every sample tried has one (checked on all 2^4 subset queries, hence on all of [0, 1]^4)."""
    n_prime, size = 10, 4
    eta = theory.median_premise_eta(60, size, n_prime)
    assert eta == pytest.approx(4 / n_prime)  # floor(16/4) / (4 n') = 1/n', times 4
    C = median.small_databases(size, n_prime)
    subsets = np.array([[(j >> i) & 1 for i in range(size)] for j in range(16)], dtype=float)
    worst = np.array([0.5, 1.5, 2.5, 5.5]) / n_prime  # every n' p_x half an odd integer
    rng = np.random.default_rng(0)
    for p in [worst, *rng.dirichlet(np.ones(size), size=200)]:
        best = np.min(np.max(np.abs(C @ subsets.T - subsets @ p), axis=1))
        assert best <= eta / 4 + 1e-12
    best_worst = np.min(np.max(np.abs(C @ subsets.T - subsets @ worst), axis=1))
    assert best_worst == pytest.approx(eta / 4)  # attained: any smaller eta fails here


def test_median_premise_eta_takes_claim1_when_it_is_smaller():
    # a huge universe: rounding is useless, Claim 1 (alpha = eta/4) decides
    eta = theory.median_premise_eta(60, 2**20, 1_000)
    assert eta == pytest.approx(4 * theory.claim1_alpha(60, 1_000))
    assert theory.claim1_subsample_size(60, eta / 4) == pytest.approx(1_000)
    with pytest.raises(ValueError, match="n_prime"):
        theory.median_premise_eta(60, 4, 0)


@pytest.mark.parametrize("eta", [0.01, 0.1, 0.3])
def test_private_median_onset_is_the_first_n_where_the_failure_bound_is_small(eta):
    k, m = 60, 15
    n = theory.private_median_onset(k, m, eta, 1.0)
    assert theory.private_median_failure_bound(n, k, m, eta, 1.0) <= 0.05
    assert theory.private_median_failure_bound(n - 1, k, m, eta, 1.0) > 0.05
    # it scales like m ln(k + m) / (epsilon eta): ten times eta, about a tenth of n
    assert theory.private_median_onset(k, m, eta, 10.0) == pytest.approx(n / 10, rel=0.01)
    assert theory.private_median_onset(k, m, eta, 1.0, beta=0.5) < n


def test_private_median_onset_rejects_bad_input():
    with pytest.raises(ValueError, match="beta"):
        theory.private_median_onset(60, 15, 0.1, 1.0, beta=1.0)
    with pytest.raises(ValueError, match="eta"):
        theory.private_median_onset(60, 15, 0.0, 1.0)
    assert math.isfinite(theory.private_median_onset(1, 1, 1.0, 1e-3))


def test_projection_crossover_is_where_theorem9_meets_the_error_without_projection():
    sigma = theory.sigma_eps_delta(1.0, 1e-6)
    cross = theory.projection_crossover_n(1000, 256, 1.0, 1e-6)
    assert cross == pytest.approx(sigma * 1000 / (2 * math.sqrt(2 * math.log(256))))  # Exercise 4
    width = theory.gaussian_width_bound(1000, 256)
    for n, below in [(math.floor(cross), True), (math.ceil(cross), False)]:
        sigma_projected = math.sqrt(2 * sigma * width / (n * math.sqrt(1000)))
        assert (sigma_projected < theory.gaussian_average_error(1000, n, 1.0, 1e-6)) == below
    assert theory.projection_crossover_n(1000, 256, 0.1, 1e-6) > 8 * cross  # ~ 1 / epsilon
    assert theory.projection_crossover_n(5, 1, 1.0, 1e-6) == math.inf  # K_Q a point


def test_projection_error_ratio_combines_theorem9_and_the_dimension_of_K_Q():
    ratio = theory.projection_error_ratio
    assert ratio(1000, 10**6, 64, 1.0, 1e-6) == pytest.approx(math.sqrt(63 / 1000))
    assert ratio(20, 1000, 64, 1.0, 1e-6) == 1.0  # full-dimensional K_Q, small noise: nothing
    cross = theory.projection_crossover_n(20, 64, 1.0, 1e-6)
    assert ratio(20, 4, 64, 1.0, 1e-6) == pytest.approx(math.sqrt(4 / cross))
    values = [ratio(200, n, 64, 1.0, 1e-6) for n in (10, 100, 1000, 10**4)]
    assert values == sorted(values) and values[-1] == pytest.approx(math.sqrt(63 / 200))


def test_projection_error_ratio_bounds_the_measured_ratio_and_is_nearly_attained():
    """Measured on the chapter's explorable (3 runs, fixed seeds): at m = 1,000 and n = 10,000 the
    noise hardly leaves the affine hull's neighbourhood, so the error left is close to the
    dimension bound sqrt(63/1000) (a ratio of chi-square norms: relative spread about
    sqrt(2/63)/sqrt(3) ~ 0.1 for the squares, half that for the ratio); at m = 20, n = 1,000 the
    bound is 1 and the projection indeed does nothing; at n = 10 it removes more than promised."""
    from dpteach import projection

    def measured(epsilon, n, m):
        runs = projection.explore_run(epsilon, n, m)
        plain, proj = (np.sqrt(np.mean(runs[k] ** 2)) for k in ("gaussian", "projected"))
        return proj / plain

    bound = theory.projection_error_ratio(1000, 10_000, 64, 1.0, 1e-6)
    assert measured(1.0, 10_000, 1000) == pytest.approx(bound, rel=0.15)
    assert measured(1.0, 1000, 20) == pytest.approx(1.0, abs=1e-3)
    assert measured(1.0, 10, 20) <= theory.projection_error_ratio(20, 10, 64, 1.0, 1e-6)
