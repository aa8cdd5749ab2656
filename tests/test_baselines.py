"""The Laplace and Gaussian baselines of chapter 00."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import baselines, theory
from dpteach.audit import audit, repeat


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


# --- structured baselines: the noisy histogram and noisy marginal tables ----------------------

SMALL = dp.Domain({"a": 2, "b": 3, "c": 2})
SMALL_WORKLOADS = {
    "histogram (T = 1)": [("a", "b", "c")],
    "1-way (T = 3)": [("a",), ("b",), ("c",)],
    "2-way (T = 3)": [("a", "b"), ("a", "c"), ("b", "c")],
    "mixed, overlapping (T = 4)": [("a",), ("a", "b"), ("c", "b"), ("b",)],
}


@pytest.mark.parametrize("marginals", SMALL_WORKLOADS.values(), ids=SMALL_WORKLOADS.keys())
def test_tables_sensitivity_by_brute_force(marginals):
    """Replace each record of a small database by every value of X: the largest L1 and L2 change
    of the true tables is exactly 2T/n and sqrt(2T)/n."""
    workload = dp.MarginalWorkload(SMALL, marginals)
    records = np.array([[0, 0, 0], [1, 2, 1], [0, 1, 1], [1, 0, 0]])
    n, tables = len(records), len(marginals)
    true = baselines.exact_marginal_answers(dp.Dataset(records, SMALL), workload)
    changes = []
    for i in range(n):
        for x in np.ndindex(*SMALL.shape):
            neighbour = records.copy()
            neighbour[i] = x
            changes.append(
                baselines.exact_marginal_answers(dp.Dataset(neighbour, SMALL), workload) - true
            )
    changes = np.array(changes)
    l1, l2 = np.abs(changes).sum(axis=1).max(), np.linalg.norm(changes, axis=1).max()
    assert l1 == pytest.approx(baselines.tables_sensitivity(tables, n, norm=1), rel=1e-12)
    assert l2 == pytest.approx(baselines.tables_sensitivity(tables, n, norm=2), rel=1e-12)
    assert baselines.tables_sensitivity(tables, n, norm=1) == 2 * tables / n


def test_exact_marginal_answers_match_the_workload_and_need_no_histogram():
    adult = dp.load_adult("small")
    for way in (1, 2, 3):
        workload = dp.MarginalWorkload.all_kway(adult.domain, way)
        exact = baselines.exact_marginal_answers(adult, workload)
        assert np.allclose(exact, workload.answer(adult), rtol=0, atol=1e-12)
    # 2^40 cells: far beyond a dense histogram, but the tables are counted from the records
    huge = dp.Domain.binary(40)
    data = dp.Dataset(np.random.default_rng(0).integers(0, 2, size=(500, 40)), huge)
    workload = dp.MarginalWorkload.all_kway(huge, 2)
    noisy = baselines.laplace_marginal_answers(data, workload, epsilon=1.0, rng=0)
    assert noisy.shape == (workload.k,)
    with pytest.raises(ValueError, match="universe"):
        baselines.laplace_histogram_answers(data, workload, epsilon=1.0, rng=0)


def _noise_of(release, data, workload, seeds):
    true = workload.answer(data)
    return np.concatenate([release(data, workload, rng=s) - true for s in range(seeds)])


BINARY4 = dp.Domain.binary(4)
DATA4 = dp.Dataset(np.random.default_rng(1).integers(0, 2, size=(500, 4)), BINARY4)
TWO_WAY4 = dp.MarginalWorkload.all_kway(BINARY4, 2)  # T = 6 tables of 4 cells: k = 24


def test_structured_laplace_noise_has_scale_2T_over_n_eps_and_is_unbiased():
    eps = 0.5
    noise = _noise_of(
        lambda d, w, rng: baselines.laplace_marginal_answers(d, w, epsilon=eps, rng=rng),
        DATA4, TWO_WAY4, 300,
    )  # fmt: skip
    scale = 2 * 6 / (500 * eps)  # not k/(n eps) = 24/(n eps): the tables' structure
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > 1e-6
    assert stats.kstest(noise, stats.laplace(scale=1.3 * scale).cdf).pvalue < 1e-6
    assert stats.kstest(noise, stats.laplace(scale=scale / 1.3).cdf).pvalue < 1e-6
    assert abs(noise.mean()) < 4 * math.sqrt(2) * scale / math.sqrt(noise.size)


def test_structured_gaussian_noise_has_the_sigma_of_sqrt_2T_over_n():
    eps, delta = 1.0, 1e-6
    noise = _noise_of(
        lambda d, w, rng: baselines.gaussian_marginal_answers(
            d, w, epsilon=eps, delta=delta, rng=rng
        ),
        DATA4, TWO_WAY4, 300,
    )  # fmt: skip
    sigma = dp.gaussian_sigma(math.sqrt(2 * 6) / 500, eps, delta)
    assert stats.kstest(noise, stats.norm(scale=sigma).cdf).pvalue > 1e-6
    assert stats.kstest(noise, stats.norm(scale=1.3 * sigma).cdf).pvalue < 1e-6
    assert stats.kstest(noise, stats.norm(scale=0.7 * sigma).cdf).pvalue < 1e-6
    assert abs(noise.mean()) < 4 * sigma / math.sqrt(noise.size)


def test_gaussian_histogram_noise_of_a_query_summing_c_cells():
    """A 2-way marginal query on 4 binary attributes sums c = 4 cells of the noisy histogram:
    its noise is N(0, c sigma^2), sigma at L2 sensitivity sqrt(2)/n."""
    eps, delta = 1.0, 1e-6
    noise = _noise_of(
        lambda d, w, rng: baselines.gaussian_histogram_answers(
            d, w, epsilon=eps, delta=delta, rng=rng
        ),
        DATA4, TWO_WAY4, 300,
    )  # fmt: skip
    rms = theory.histogram_rms_error(4, 500, eps, delta)
    assert rms == pytest.approx(2 * dp.gaussian_sigma(math.sqrt(2) / 500, eps, delta))
    assert stats.kstest(noise, stats.norm(scale=rms).cdf).pvalue > 1e-6
    assert stats.kstest(noise, stats.norm(scale=1.3 * rms).cdf).pvalue < 1e-6
    assert abs(noise.mean()) < 4 * rms / math.sqrt(noise.size)


def test_structured_errors_match_theory():
    """Mean and max absolute error of each release, averaged over 300 seeds, against
    :mod:`dpteach.theory` (4 standard errors; the max of k exponentials has standard deviation
    at most b pi/sqrt(6), the max of Gaussians at most sigma)."""
    n, k, tables, eps, delta, seeds = 500, TWO_WAY4.k, 6, 1.0, 1e-6, 300
    true = TWO_WAY4.answer(DATA4)
    releases = {
        "laplace": lambda s: baselines.laplace_marginal_answers(
            DATA4, TWO_WAY4, epsilon=eps, rng=s
        ),
        "gaussian": lambda s: baselines.gaussian_marginal_answers(
            DATA4, TWO_WAY4, epsilon=eps, delta=delta, rng=s
        ),
        "histogram": lambda s: baselines.laplace_histogram_answers(
            DATA4, TWO_WAY4, epsilon=eps, rng=s
        ),
    }
    errors = {
        name: np.abs(np.array([f(s) for s in range(seeds)]) - true) for name, f in releases.items()
    }
    laplace_mean, laplace_max = theory.marginal_laplace_errors(k, tables, n, eps)
    gauss_mean, gauss_max = theory.marginal_gaussian_errors(k, tables, n, eps, delta)
    b, sigma = laplace_mean, gauss_mean / math.sqrt(2 / math.pi)
    se = 4 / math.sqrt(seeds)
    assert errors["laplace"].mean() == pytest.approx(laplace_mean, abs=se * b / math.sqrt(k))
    assert errors["laplace"].max(axis=1).mean() == pytest.approx(laplace_max, abs=se * b * 1.3)
    assert errors["gaussian"].mean() == pytest.approx(gauss_mean, abs=se * sigma / math.sqrt(k))
    assert errors["gaussian"].max(axis=1).mean() == pytest.approx(gauss_max, abs=se * sigma)
    # the histogram: a 2-way query sums 4 cells, RMS sqrt(8) 2/(n eps)
    rms = float(theory.histogram_rms_error(4, n, eps))
    assert math.sqrt(np.mean(errors["histogram"] ** 2)) == pytest.approx(rms, rel=0.05)
    # a theory function that is wrong by 30 % is rejected by the same tolerances
    assert errors["laplace"].max(axis=1).mean() != pytest.approx(
        1.3 * laplace_max, abs=se * b * 1.3
    )
    assert errors["gaussian"].max(axis=1).mean() != pytest.approx(1.3 * gauss_max, abs=se * sigma)


def test_structured_baselines_charge_once_and_refuse_without_releasing():
    budget, zcdp = dp.PrivacyBudget(1.0, 1e-6), dp.ZCDPBudget(0.5)
    baselines.laplace_marginal_answers(DATA4, TWO_WAY4, epsilon=0.4, rng=0, budget=budget)
    baselines.gaussian_histogram_answers(
        DATA4, TWO_WAY4, epsilon=0.5, delta=5e-7, rng=0, budget=budget
    )
    assert budget.spent_epsilon == pytest.approx(0.9) and budget.spent_delta == pytest.approx(5e-7)
    baselines.laplace_histogram_answers(DATA4, TWO_WAY4, epsilon=0.6, rng=0, budget=zcdp)
    assert zcdp.spent == pytest.approx(0.18)
    gen = np.random.default_rng(0)
    before = gen.bit_generator.state
    refused = [
        lambda: baselines.gaussian_marginal_answers(
            DATA4, TWO_WAY4, epsilon=0.2, delta=1e-6, rng=gen, budget=budget
        ),  # overspends delta
        lambda: baselines.laplace_marginal_answers(
            DATA4, TWO_WAY4.subset([0, 1]), epsilon=0.05, rng=gen, budget=budget
        ),  # not a MarginalWorkload
        lambda: baselines.laplace_marginal_answers(
            DATA4, dp.MarginalWorkload.all_kway(SMALL, 1), epsilon=0.05, rng=gen, budget=budget
        ),  # another universe
        lambda: baselines.gaussian_marginal_answers(
            DATA4, TWO_WAY4, epsilon=0.0, delta=1e-8, rng=gen, budget=budget
        ),
        lambda: baselines.laplace_marginal_answers(
            DATA4.histogram(), TWO_WAY4, epsilon=0.05, rng=gen, budget=budget
        ),  # fmt: skip
    ]
    for release, error in zip(refused, (dp.BudgetExceededError, TypeError, ValueError,
                                        ValueError, TypeError)):  # fmt: skip
        with pytest.raises(error):
            release()
    assert gen.bit_generator.state == before
    assert budget.spent_epsilon == pytest.approx(0.9) and budget.spent_delta == pytest.approx(5e-7)


# --- audits: one record replaced in a 2-record database over {0,1}^2 --------------------------
# Each release is reduced to the optimal (Neyman-Pearson) statistic for the pair: the Laplace
# privacy loss sum_j |y_j - a'_j| - |y_j - a_j|, or the projection on a - a' for Gaussian noise.

AUDIT_DOM = dp.Domain.binary(2)
AUDIT_D = dp.Dataset([[0, 0], [1, 1]], AUDIT_DOM)
AUDIT_D_PRIME = dp.Dataset([[0, 0], [0, 0]], AUDIT_DOM)  # differs on both attributes
ONE_WAY = dp.MarginalWorkload.all_kway(AUDIT_DOM, 1)  # T = 2: every table changes
IDENTITY = dp.MarginalWorkload(AUDIT_DOM, [("x0", "x1")])  # the histogram's cells
AUDITED = {
    # name: (release at epsilon e, workload, delta, overspend the audit must catch)
    "laplace marginals": (lambda e: lambda d, w, g: baselines.laplace_marginal_answers(
        d, w, epsilon=e, rng=g), ONE_WAY, 0.0, 3.0),
    "gaussian marginals": (lambda e: lambda d, w, g: baselines.gaussian_marginal_answers(
        d, w, epsilon=e, delta=1e-6, rng=g), ONE_WAY, 1e-6, 8.0),
    "laplace histogram": (lambda e: lambda d, w, g: baselines.laplace_histogram_answers(
        d, w, epsilon=e, rng=g), IDENTITY, 0.0, 3.0),
    "gaussian histogram": (lambda e: lambda d, w, g: baselines.gaussian_histogram_answers(
        d, w, epsilon=e, delta=1e-6, rng=g), IDENTITY, 1e-6, 8.0),
}  # fmt: skip


def _audit_sampler(release, workload, gaussian):
    a, b = workload.answer(AUDIT_D), workload.answer(AUDIT_D_PRIME)
    if gaussian:
        statistic = lambda y: float((y - (a + b) / 2) @ (a - b))  # noqa: E731
    else:
        statistic = lambda y: float(np.sum(np.abs(y - b) - np.abs(y - a)))  # noqa: E731
    return repeat(lambda data, gen: statistic(release(data, workload, gen)))


@pytest.mark.parametrize("name", AUDITED)
def test_structured_baselines_pass_their_audit_and_an_overspend_is_caught(name):
    """Measured power (``smallest_overspend_caught``, seed 3, factors 1.25-8): at 2,000 samples
    the Laplace releases are caught from an overspend of 2 (marginals) and 1.5 (histogram),
    the Gaussian ones from 5 (their privacy loss at (1, 1e-6) is far below 1 but in rare
    tails); the test asserts a margin above those."""
    make, workload, delta, overspend = AUDITED[name]
    gaussian = delta > 0
    honest = _audit_sampler(make(1.0), workload, gaussian)
    result = audit(honest, AUDIT_D, AUDIT_D_PRIME, epsilon=1.0, delta=delta, samples=2_000, rng=3)
    assert not result.flagged, result
    broken = _audit_sampler(make(overspend), workload, gaussian)
    caught = audit(broken, AUDIT_D, AUDIT_D_PRIME, epsilon=1.0, delta=delta, samples=2_000, rng=3)
    assert caught.flagged, caught


def test_marginal_max_error_is_the_naive_bound_at_the_tables_sensitivity():
    """With 2T = k tables the structured bound is the naive one (same sensitivity), and the
    Laplace tables' max error exceeds it in at most a fraction beta of releases (plus 4 s.e.),
    while a bound 30 % lower is exceeded far more often."""
    n, eps, delta, k, tables = 500, 1.0, 1e-6, TWO_WAY4.k, 6
    assert theory.marginal_max_error(k, k // 2, n, eps) == pytest.approx(
        theory.laplace_max_error(k, n, eps)
    )
    assert theory.marginal_max_error(k, k // 2, n, eps, delta) == pytest.approx(
        theory.gaussian_max_error(k, n, eps, delta)
    )
    bound = theory.marginal_max_error(k, tables, n, eps)
    assert bound == pytest.approx(2 * tables / (n * eps) * math.log(k / 0.05))
    true, runs = TWO_WAY4.answer(DATA4), 2_000
    gen = np.random.default_rng(5)
    worst = np.array([
        np.abs(baselines.laplace_marginal_answers(DATA4, TWO_WAY4, epsilon=eps, rng=gen)
               - true).max()
        for _ in range(runs)
    ])  # fmt: skip
    exact = 1 - (1 - 0.05 / k) ** k  # the chance for continuous Laplace noise, just under beta
    assert np.mean(worst > bound) <= exact + 4 * math.sqrt(exact / runs)
    assert np.mean(worst > 0.7 * bound) > 3 * exact
    with pytest.raises(ValueError, match="tables"):
        theory.marginal_max_error(k, 0, n, eps)
