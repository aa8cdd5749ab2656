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
