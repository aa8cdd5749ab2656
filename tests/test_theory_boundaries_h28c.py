"""The regime boundary of chapter 05's BBScheduler explorable (issue 28): where the Laplace black
box's noise bound meets the staleness floor, and that the noise bound holds on real runs."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import growing, streams, theory


@pytest.mark.parametrize(
    ("k", "epsilon", "n0"), [(33, 1.0, 5000), (4, 0.1, 1000), (300, 10.0, 10**6)]
)
def test_at_the_balanced_gamma_noise_equals_staleness_and_each_side_has_its_winner(k, epsilon, n0):
    star = theory.bbscheduler_balanced_gamma(k, epsilon, n0)
    assert math.isfinite(star) and star > 0
    noise = theory.bbscheduler_laplace_noise(k, epsilon, star, n0)
    assert noise == pytest.approx(theory.epoch_staleness(star), rel=1e-12)
    for gamma in (star / 2, star / 10):
        assert theory.bbscheduler_laplace_noise(k, epsilon, gamma, n0) > theory.epoch_staleness(
            gamma
        )
    for gamma in (2 * star, 10 * star):
        assert theory.bbscheduler_laplace_noise(k, epsilon, gamma, n0) < theory.epoch_staleness(
            gamma
        )


def test_the_balanced_gamma_falls_like_the_inverse_square_root_of_eps_n0():
    """u* = gamma*/(1+gamma*) is proportional to (eps n0)^(-1/2): 4x the data, half the u*."""
    u = [
        g / (1 + g) for g in (theory.bbscheduler_balanced_gamma(33, 1.0, n) for n in (5000, 20_000))
    ]
    assert u[1] == pytest.approx(u[0] / 2, rel=1e-12)
    assert theory.bbscheduler_balanced_gamma(33, 2.0, 5000) == theory.bbscheduler_balanced_gamma(
        33, 1.0, 10_000
    )


def test_when_eps_n0_is_too_small_the_noise_dominates_at_every_gamma():
    assert theory.bbscheduler_balanced_gamma(33, 0.1, 1000) == math.inf
    for gamma in (0.1, 1.0, 100.0, 1e6):
        assert theory.bbscheduler_laplace_noise(33, 0.1, gamma, 1000) > theory.epoch_staleness(
            gamma
        )


def test_the_first_epoch_noise_bound_is_the_laplace_bound_at_eps_0_t_0():
    beta0 = 6 * 0.05 / math.pi**2
    expected = theory.laplace_max_error(33, 1, 0.5 / 1.5 * 5000, beta=beta0)  # k/(n eps) ln(k/beta)
    assert theory.bbscheduler_laplace_noise(33, 1.0, 0.5, 5000) == pytest.approx(
        expected, rel=1e-12
    )


def test_the_noise_bound_holds_on_bbschedulers_first_run():
    """200 seeded runs of BBScheduler with the Laplace box on 33 marginal queries: the first
    run's max error exceeds the bound in at most a beta_0 fraction (up to a binomial 1e-6 tail),
    and it would catch a bound three times too small."""
    tiny = dp.load_adult("tiny")
    attrs = ("sex", "race", "income>50K")
    Q = dp.MarginalWorkload(
        tiny.domain, [(a,) for a in attrs] + list(itertools.combinations(attrs, 2))
    )
    start = tiny.sample(2000, rng=0)
    stream = streams.adversarial_stream(start, horizon=2100, rng=1)  # one epoch at gamma = 0.5
    bound = theory.bbscheduler_laplace_noise(Q.k, 1.0, 0.5, 2000)
    first = np.array([
        growing.bb_scheduler(stream, growing.LaplaceBox(), Q, epsilon=1.0, gamma=0.5, rng=seed)
        .trace[0].max_error for seed in range(200)
    ])  # fmt: skip
    beta0 = 6 * 0.05 / math.pi**2
    allowed = stats.binom.ppf(1 - 1e-6, first.size, beta0)
    assert np.sum(first > bound) <= allowed
    assert np.sum(first > bound / 3) > allowed  # the check rejects a bound 3x too small


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: theory.bbscheduler_balanced_gamma(33, 0.0, 5000), ValueError),
        (lambda: theory.bbscheduler_balanced_gamma(33, 1.0, 0), ValueError),
        (lambda: theory.bbscheduler_balanced_gamma(True, 1.0, 5000), TypeError),
        (lambda: theory.bbscheduler_balanced_gamma(33, 1.0, 5000, beta=1.0), ValueError),
        (lambda: theory.bbscheduler_laplace_noise(33, 1.0, -0.5, 5000), ValueError),
        (lambda: theory.bbscheduler_laplace_noise(33, 1.0, 0.5, 50.5), TypeError),
    ],
)
def test_bad_input_is_refused(call, error):
    with pytest.raises(error):
        call()
