"""The floating-point-safe Laplace mechanism: exact privacy loss, exact sampler, refusals free.

The privacy loss is computed exactly from the output pmfs on worst-case neighbouring vectors: for
independent coordinates, the largest log-ratio over all outputs is the sum over coordinates of the
largest per-coordinate log-ratio. The old grid rule (sensitivity ``ceil(Delta/g) + 1`` steps for
the whole vector) is computed the same way and exceeds epsilon, so the test can fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import dpteach as dp
from dpteach import _noise
from dpteach.mechanisms import safe_laplace_grid

LEVEL = 1e-6


def _worst_pair(g: float, delta: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Neighbours at L1 distance exactly ``delta`` whose snapped vectors differ most: every
    coordinate but the first crosses a rounding boundary (g/2) with a tiny move 2 eta, the first
    takes the rest. All numbers are dyadic, so the floating-point values are exact."""
    eta = 2.0 ** math.floor(math.log2(min(g * 2.0**-20, delta / (4 * k))))
    v = np.full(k, g / 2 - eta)
    v_prime = np.full(k, g / 2 + eta)
    v_prime[0] = g / 2 - eta + delta - (k - 1) * 2 * eta
    assert math.fsum(np.abs(v_prime - v)) == delta
    return v, v_prime


def _max_log_ratio(a: np.ndarray, b: np.ndarray, rate: float) -> float:
    """Exact max over outputs of ln P[a + Z = y] / P[b + Z = y], Z with pmf ∝ exp(-rate |z|)
    independently per coordinate, evaluated on a window that contains every maximiser."""
    total = 0.0
    for ai, bi in zip(a.tolist(), b.tolist(), strict=True):
        y = np.arange(min(ai, bi) - 3, max(ai, bi) + 4)
        log_pa, log_pb = -rate * np.abs(y - ai), -rate * np.abs(y - bi)  # same normaliser
        total += float(np.max(log_pa - log_pb))
    return total


def safe_loss(delta: float, epsilon: float, k: int) -> float:
    grid = safe_laplace_grid(delta, epsilon, k=k)
    v, v_prime = _worst_pair(grid.spacing, delta, k)
    return _max_log_ratio(grid.snap(v), grid.snap(v_prime), 1 / grid.scale)


def old_rule_loss(delta: float, epsilon: float, k: int) -> float:
    """The grid before this fix: g = 2^(floor(log2(Delta/eps)) - 10), ceil(Delta/g) + 1 steps."""
    g = 2.0 ** (math.floor(math.log2(delta / epsilon)) - 10)
    steps = math.ceil(delta / g) + 1
    v, v_prime = _worst_pair(g, delta, k)
    return _max_log_ratio(np.round(v / g), np.round(v_prime / g), epsilon / steps)


@pytest.mark.parametrize("k", [1, 16, 256, 1024])
@pytest.mark.parametrize(("delta", "epsilon"), [(1.0, 1.0), (1.0, 0.1), (0.25, 3.0)])
def test_exact_privacy_loss_of_safe_laplace_is_at_most_epsilon(delta, epsilon, k):
    loss = safe_loss(delta, epsilon, k)
    assert loss <= epsilon
    assert loss >= epsilon * (1 - 2e-3)  # the pair is (nearly) worst case: the bound is tight
    if k >= 16:
        assert old_rule_loss(delta, epsilon, k) > epsilon * (1 + 1e-3)  # the test can fail


def test_old_rule_loss_figures():
    """The figures quoted in the report (epsilon = 1, Delta = 1)."""
    assert old_rule_loss(1.0, 1.0, 1) == pytest.approx(1024 / 1025)
    assert old_rule_loss(1.0, 1.0, 256) == pytest.approx(1279 / 1025)
    assert old_rule_loss(1.0, 1.0, 4096) == pytest.approx(5119 / 1025)
    assert safe_loss(1.0, 1.0, 4096) <= 1.0


@settings(max_examples=200, deadline=None)
@given(
    k=st.integers(1, 40),
    delta=st.floats(1e-6, 1e6),
    epsilon=st.floats(1e-3, 1e3),
    seed=st.integers(0, 2**32),
)
def test_snapping_moves_neighbours_by_at_most_the_charged_steps(k, delta, epsilon, seed):
    """For any v and any v' within L1 distance Delta, the snapped vectors differ by at most
    ``steps`` grid steps, and ``steps / T <= epsilon``."""
    grid = safe_laplace_grid(delta, epsilon, k=k)
    gen = np.random.default_rng(seed)
    v = gen.normal(0, 10 * delta, k)
    move = gen.dirichlet(np.full(k, 0.3)) * delta * gen.uniform(0, 1) * gen.choice([-1, 1], k)
    diff = np.abs(grid.snap(v + move).astype(object) - grid.snap(v).astype(object)).sum()
    assert diff <= grid.steps
    assert grid.steps / grid.scale <= epsilon
    # the noise is at most 0.1 % (2^-10) above the Laplace scale
    assert grid.scale * grid.spacing <= (1 + 2**-10) * delta / epsilon


def _discrete_laplace_pmf(scale: float, support: np.ndarray) -> np.ndarray:
    r = math.exp(-1 / scale)
    return (1 - r) / (1 + r) * r ** np.abs(support)


def _scalar_draws(scale: int, draws: int, seed: int) -> np.ndarray:
    rand = _noise.scalar_source(np.random.default_rng(seed))
    return np.array([_noise.discrete_laplace_scalar(scale, rand) for _ in range(draws)])


@pytest.mark.parametrize("path", ["vectorised", "scalar"])
@pytest.mark.parametrize("scale", [1, 3, 40])
def test_discrete_laplace_sampler_draws_the_exact_pmf(scale, path):
    """Chi-square against the exact pmf; the same test rejects a scale 30 % off."""
    draws = 200_000 if path == "vectorised" else 50_000
    if path == "vectorised":
        z = _noise.discrete_laplace(scale, draws, np.random.default_rng(scale))
        assert z.dtype == np.int64
    else:
        z = _scalar_draws(scale, draws, scale)
    edge = 6 * scale
    support = np.arange(-edge, edge + 1)
    observed = np.bincount(np.clip(z, -edge - 1, edge + 1) + edge + 1, minlength=support.size + 2)

    def expected(s):
        inner = _discrete_laplace_pmf(s, support)
        tail = (1 - inner.sum()) / 2
        return draws * np.r_[tail, inner, tail]

    assert stats.chisquare(observed, expected(scale)).pvalue > LEVEL
    assert stats.chisquare(observed, expected(1.3 * scale)).pvalue < LEVEL
    assert stats.chisquare(observed, expected(scale / 1.3)).pvalue < LEVEL


@pytest.mark.parametrize(("num", "den"), [(0, 5), (1, 1), (3, 7), (6, 7), (7, 7)])
def test_bernoulli_exp_is_exact(num, den):
    draws = 100_000
    hits = _noise._bernoulli_exp(np.full(draws, num), den, np.random.default_rng(num)).sum()
    p = math.exp(-num / den)
    assert abs(hits / draws - p) <= 5 * math.sqrt(p * (1 - p) / draws) + 1e-12


def test_laplace_adds_discrete_noise_of_the_grid_scale_to_the_snapped_value():
    value = np.full(50_000, 0.3)
    out = dp.laplace(value, sensitivity=2.0, epsilon=0.5, rng=3)
    grid = safe_laplace_grid(2.0, 0.5, k=value.size)
    units = out / grid.spacing
    assert np.all(units == np.round(units))  # every output is on the grid
    z = (units - grid.snap(value)).astype(np.int64)
    # variance of the discrete Laplace of scale T: 2 r / (1 - r)^2, r = exp(-1/T)
    r = math.exp(-1 / grid.scale)
    var = 2 * r / (1 - r) ** 2
    se = var * math.sqrt(2 / z.size) * 3  # generous: Laplace has kurtosis 6
    assert abs(z.var() - var) < 5 * se / 3
    assert stats.kstest(z * grid.spacing, stats.laplace(scale=2.0 / 0.5).cdf).pvalue > LEVEL
    assert np.all(value == 0.3)  # not modified


def test_huge_values_are_clamped_privately_not_refused_after_charging():
    budget = dp.PrivacyBudget(1.0)
    out = dp.laplace(np.array([1e300, -1e300, 5.0]), sensitivity=1.0, epsilon=0.5, rng=0,
                     budget=budget)  # fmt: skip
    assert np.all(np.isfinite(out)) and out[0] > 1e14 and out[1] < -1e14
    assert budget.spent_epsilon == 0.5


@pytest.mark.parametrize(
    ("sensitivity", "epsilon", "k"),
    [(1.0, 1e-14, 1), (1e200, 1e-200, 1), (1.0, 1e-9, 10_000)],
)
def test_unrepresentable_scales_are_refused_before_any_charge(sensitivity, epsilon, k):
    budget = dp.PrivacyBudget(10.0)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(ValueError, match="epsilon|scale"):
        dp.laplace(np.zeros(k), sensitivity=sensitivity, epsilon=epsilon, rng=gen, budget=budget)
    assert budget.ledger == [] and gen.bit_generator.state == state


def test_naive_laplace_is_kept_only_as_an_explicit_option():
    safe = dp.laplace(np.zeros(1000), sensitivity=1.0, epsilon=1.0, rng=1)
    naive = dp.laplace(np.zeros(1000), sensitivity=1.0, epsilon=1.0, rng=1, safe=False)
    g = dp.mechanisms.grid_spacing(1.0, 1.0, k=1000)
    assert np.all(np.mod(safe, g) == 0)
    assert np.mean(np.mod(naive, g) != 0) > 0.99
    with pytest.raises(TypeError, match="safe"):
        dp.laplace(0.0, sensitivity=1.0, epsilon=1.0, rng=0, safe=1)
