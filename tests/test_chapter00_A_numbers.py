"""The numbers that the prose of chapter 00 and appendix A relies on, recomputed.

Most numbers are printed by the notebooks' cells; these are the ones the text states from theory
(constants, formulas) and the widget's reachable values.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import theory, widgets

# --- chapter 00 ---------------------------------------------------------------------------------


def test_harmonic_numbers_approach_ln_k_plus_euler_gamma():
    # Exercise 2: H_k ~ ln k + 0.577 (Euler-Mascheroni)
    k = 10**6
    harmonic = theory.laplace_expected_max_error(k, k, 1.0)  # b = k / (n eps) = 1
    assert harmonic - math.log(k) == pytest.approx(0.5772, abs=1e-3)
    assert np.euler_gamma == pytest.approx(0.577, abs=5e-4)


def test_classic_gaussian_calibration_uses_ln_1_25_over_delta():
    sigma = dp.gaussian_sigma(1.0, 0.5, 1e-6, calibration="classic")
    assert sigma == pytest.approx(math.sqrt(2 * math.log(1.25 / 1e-6)) / 0.5)
    assert dp.gaussian_sigma(1.0, 0.5, 1e-6) <= sigma


def test_the_adult_universe_has_about_1_8_million_cells():
    domain = dp.load_adult("medium").domain
    assert round(domain.size / 1e6, 1) == 1.8
    assert dp.MarginalWorkload.all_kway(domain, 2).k == 1582


def test_exceeding_the_beta_bound_exactly():
    # Laplace: P[max > b ln(k/beta)] = 1 - (1 - beta/k)^k, just under beta; the Gaussian bound's
    # union of 2 e^{-t^2/2} tails is loose, so its exact probability is about ten times smaller.
    for k in (100, 1582):
        lap = 1 - (1 - 0.05 / k) ** k
        t = math.sqrt(2 * math.log(2 * k / 0.05))
        gau = 1 - (1 - 2 * stats.norm.sf(t)) ** k
        assert 0.048 < lap < 0.05 and gau < 0.006


def test_gaussian_expected_max_error_matches_simulation():
    rng = np.random.default_rng(0)
    k, n, eps, delta = 300, 1000, 1.0, 1e-6
    sigma = dp.gaussian_sigma(math.sqrt(k) / n, eps, delta)
    maxima = np.abs(rng.normal(0, sigma, (4000, k))).max(axis=1)
    exact = theory.gaussian_expected_max_error(k, n, eps, delta)
    assert abs(maxima.mean() - exact) < 4 * maxima.std() / math.sqrt(4000)
    # and the test would see a 3 % error
    assert abs(maxima.mean() - 1.03 * exact) > 4 * maxima.std() / math.sqrt(4000)


def test_log_slider_returns_to_its_default_and_int_slider_reaches_its_max():
    eps = widgets.log_slider("eps", 1.0, 0.1, 10)
    positions = eps.min + eps.step * np.arange(round((eps.max - eps.min) / eps.step) + 1)
    assert 0.0 in positions  # exponent 0: epsilon = 1 exactly
    assert positions[-1] == eps.max and 10**eps.max <= 10 and 10**eps.min >= 0.1
    alpha = widgets.log_slider("alpha", 0.15, 0.07, 0.5)
    j = (math.log10(0.15) - alpha.min) / alpha.step
    assert j == pytest.approx(round(j), abs=1e-9)
    k = widgets.int_slider("k", 300, 1, 1582)
    assert k.max == 1582 and (k.max - k.min) % k.step == 0


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: widgets.log_slider("eps", 20.0, 0.1, 10), "default value"),
        (lambda: widgets.log_slider("eps", 1.0, 10, 0.1), "low must be below high"),
        (lambda: widgets.log_slider("eps", -1.0, 0.1, 10), "value"),
        (lambda: widgets.int_slider("k", 5_000, 1, 1582), "default value"),
        (lambda: widgets.int_slider("k", 300, 10, 1582, step=10), "multiples of step"),
        (lambda: widgets.int_slider("k", 5, 5, 5), "low must be below high"),
    ],
)
def test_widget_factories_refuse_instead_of_clamping(make, match):
    with pytest.raises(ValueError, match=match):
        make()


# --- appendix A ---------------------------------------------------------------------------------


def test_clopper_pearson_level_behind_exercise_3():
    # one-sided alpha/4 with alpha = 1e-3: z of about 3.5
    assert stats.norm.isf(1e-3 / 4) == pytest.approx(3.48, abs=0.01)


def test_lee_clifton_bound_of_lyu_su_li():
    # (1 + 6c) eps / 4: 3 eps / 2 per above answer, eps / 4 for the threshold
    assert [(1 + 6 * c) / 4 for c in (1, 2, 3)] == [1.75, 3.25, 4.75]


def test_safe_laplace_noise_is_at_most_1_plus_2_to_minus_10_larger():
    for k in (1, 100, 10_000):
        grid = dp.mechanisms.safe_laplace_grid(1.0, 1.0, k=k)
        assert 1 <= grid.scale * grid.spacing <= 1 + 2**-10
