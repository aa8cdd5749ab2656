# ruff: noqa: E501
"""Growing databases (chapter 05): streams, BBScheduler, BBImprover, PMWG, their schedules,
budgets, bounds, audits and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, special

import dpteach as dp
from dpteach import growing, streams, theory
from dpteach.audit import audit, encode, repeat

DOM = dp.Domain.binary(2)
P = np.array([0.4, 0.3, 0.2, 0.1])


def stationary(n0=50, horizon=400, seed=0):
    return streams.stationary_stream(P, DOM, n0=n0, horizon=horizon, rng=seed)


def workload():
    return dp.MarginalWorkload.all_kway(DOM, 1)


# --- streams and Lemma 11 ---------------------------------------------------------------------


def test_stream_prefixes_and_neighbours():
    s = stationary()
    assert s.at(60).n == 60 and np.allclose(s.histogram(60) * 60, s.counts(60))
    assert np.array_equal(s.at(10).records, s.records[:10])
    t = s.replace(3, [1, 1])  # a neighbour: differs in entry 3 from its arrival (before n0) on
    assert np.sum(np.any(t.records != s.records, axis=1)) <= 1
    for time in (4, 50, 400):  # every later database differs in one record: sensitivity 1/t
        assert np.abs(s.histogram(time) - t.histogram(time)).sum() <= 2 / time + 1e-12
    assert np.array_equal(s.histogram(3), t.histogram(3))


def test_generators():
    tiny = dp.Dataset([[0, 0]] * 30 + [[1, 1]] * 10 + [[0, 1]] * 5 + [[1, 0]], DOM)
    adv = streams.adversarial_stream(tiny, horizon=200, rng=0)
    assert adv.n0 == 46 and np.all(adv.cells[46:] == 2)  # (1, 0): the least mass in x_{n0}
    drift = streams.drifting_stream(P, P[::-1], DOM, n0=100, horizon=2000, rng=1)
    early, late = (
        np.bincount(drift.cells[100:400], minlength=4),
        np.bincount(drift.cells[-300:], minlength=4),
    )
    assert early[0] > early[3] and late[3] > late[0]
    shuffled = streams.DatabaseStream.from_dataset(tiny, n0=5, rng=2)
    assert sorted(map(tuple, shuffled.records)) == sorted(map(tuple, tiny.records))


@pytest.mark.parametrize("seed", range(5))
def test_staleness_lemma_11(seed):
    gen = np.random.default_rng(seed)
    s = streams.stationary_stream(gen.dirichlet(np.ones(4)), DOM, n0=5, horizon=300, rng=seed)
    queries = gen.random((50, 4))  # q: X -> [0, 1]
    for _ in range(40):
        a, b = sorted(gen.integers(5, 301, size=2))
        gap = np.abs(queries @ (s.histogram(b) - s.histogram(a)))
        assert np.all(gap <= theory.staleness_bound(int(b), int(a)) + 1e-12)


def test_staleness_bound_is_attained():
    # the adversarial stream moves q = 1{cell 2} by exactly (t - s)/t when x_s has no cell 2
    x = dp.Dataset([[0, 0]] * 20, DOM)
    s = streams.adversarial_stream(x, horizon=60, rng=0, learned=np.array([0.5, 0.3, 0.0, 0.2]))
    assert s.histogram(60)[2] - s.histogram(20)[2] == pytest.approx(theory.staleness_bound(60, 20))


# --- schedules ----------------------------------------------------------------------------------

GAMMAS = [1e-9, 1e-3, 0.1, 0.5, 1.0, 7.0, 1e6]


@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("n0", [1, 7, 1000])
def test_epochs_are_distinct_ceilings(gamma, n0):
    idx, times = growing.epochs(n0, gamma, 50 * n0)
    assert times[0] == n0 and np.all(np.diff(times) > 0) and times[-1] <= 50 * n0

    def x(i):  # n0 (1 + gamma)^i via log1p: accurate also for tiny gamma
        return n0 * math.exp(i * math.log1p(gamma))

    tol = 1e-11  # relative: t_i is the ceiling of x(i) up to round-off
    for prev, i, t in zip(times[:50], idx[1:51], times[1:51]):
        assert t - 1 < x(int(i)) * (1 + tol) and x(int(i)) <= t * (1 + tol)  # t_i = ceil(x(i))
        assert x(int(i) - 1) <= prev * (1 + tol)  # i is the first index past the previous time


@pytest.mark.parametrize("gamma", GAMMAS)
def test_epoch_staleness_within_gamma_over_one_plus_gamma(gamma):
    _, times = growing.epochs(10, gamma, 5000)
    for start, nxt in zip(times, times[1:]):
        assert (nxt - 1 - start) / (nxt - 1) < theory.epoch_staleness(gamma)


@pytest.mark.parametrize("schedule", ["pure", "sqrt"])
@pytest.mark.parametrize("gamma", GAMMAS)
def test_pure_schedules_sum_to_at_most_epsilon(schedule, gamma):
    for horizon in (10, 10_000, 10**9):
        idx, _ = (
            growing.epochs(10, gamma, horizon)
            if gamma > 1e-6 or horizon < 10**6
            else growing.epochs(10, gamma, 10**5)
        )
        eps = growing.scheduler_epsilons(idx, epsilon=2.0, gamma=gamma, schedule=schedule)
        assert math.fsum(eps) <= 2.0 * (1 + 1e-12)
    # over all i >= 0 the series sums to exactly epsilon
    all_i = np.arange(200_000) if gamma >= 1e-3 else np.arange(0)
    if all_i.size:
        eps = growing.scheduler_epsilons(all_i, epsilon=2.0, gamma=gamma, schedule=schedule)
        assert math.fsum(eps) == pytest.approx(2.0, rel=1e-9)


@pytest.mark.parametrize("gamma", [0.1, 0.5, 2.0])
def test_pure_schedule_keeps_eps_times_t_constant(gamma):
    eps, n0 = 1.0, 100
    idx, times = growing.epochs(n0, gamma, 10**8)
    products = growing.scheduler_epsilons(idx, epsilon=eps, gamma=gamma) * times
    floor = theory.bbscheduler_effective_size(eps, gamma, n0)
    assert np.all(products >= floor * (1 - 1e-12))
    # the ceiling adds at most eps_i (< eps gamma / (1 + gamma)) to the product
    assert np.all(products <= floor + eps * gamma / (1 + gamma))


@pytest.mark.parametrize("gamma", GAMMAS)
def test_zcdp_schedule_spends_at_most_rho(gamma):
    idx, _ = growing.epochs(10, gamma, 10**5)
    eps = growing.scheduler_epsilons(idx, epsilon=1.0, gamma=gamma, schedule="zcdp", delta=1e-6)
    rho = dp.privacy.approx_dp_to_zcdp(1.0, 1e-6)
    assert math.fsum(eps**2 / 2) <= rho * (1 + 1e-12)
    assert dp.privacy.zcdp_to_approx_dp(math.fsum(eps**2 / 2), 1e-6) <= 1.0 + 1e-12


def test_design_numbers_for_the_zcdp_schedule():
    # DESIGN section 6: eps = 1, delta = 1e-6, gamma = 0.5: eps_0 = 0.108 (zCDP) against 0.333 (pure)
    zcdp = growing.scheduler_epsilons([0], epsilon=1.0, gamma=0.5, schedule="zcdp", delta=1e-6)[0]
    pure = growing.scheduler_epsilons([0], epsilon=1.0, gamma=0.5)[0]
    assert round(zcdp, 3) == 0.108 and round(pure, 3) == 0.333


def test_sqrt_schedules_differ_by_one_factor_and_zcdp_wins_only_for_small_gamma():
    # chapter 05: the pure "sqrt" and the zCDP schedules both put eps_i ∝ (1+gamma)^(-i/2), so their
    # ratio is the same in every epoch; it is eps (1 - (1+gamma)^(-1/2)) / sqrt(2 rho gamma/(1+gamma)),
    # about sqrt(gamma / (8 rho)) for small gamma: zCDP gives more per run only below a crossover
    rho = dp.privacy.approx_dp_to_zcdp(1.0, 1e-6)

    def ratio(gamma, idx=(0, 1, 5, 20)):
        kw = dict(epsilon=1.0, gamma=gamma, delta=1e-6)
        r = growing.scheduler_epsilons(idx, schedule="sqrt", **kw) / growing.scheduler_epsilons(
            idx, schedule="zcdp", **kw
        )
        assert np.allclose(r, r[0], rtol=1e-12)
        return r[0]

    closed_form = -math.expm1(-math.log1p(0.5) / 2) / math.sqrt(2 * rho * 0.5 / 1.5)
    assert ratio(0.5) == pytest.approx(closed_form, rel=1e-12)
    assert round(ratio(0.5), 2) == 1.70
    gammas = np.geomspace(1e-4, 10, 200)
    above = np.array([ratio(g) > 1 for g in gammas])
    first = np.argmax(above)  # one crossing: below it zCDP gives more, above it pure sqrt does
    assert 0 < first and not above[:first].any() and above[first:].all()
    crossing = optimize.brentq(lambda g: ratio(g) - 1, gammas[first - 1], gammas[first])
    assert 0.1495 < crossing < 0.1505  # the chapter prints 0.150
    assert ratio(1e-4) == pytest.approx(math.sqrt(1e-4 / (8 * rho)), rel=0.01)


def test_betas_sum_to_beta():
    assert math.fsum(growing.scheduler_betas(np.arange(10**6), 0.05)) == pytest.approx(
        0.05, rel=1e-5
    )
    assert math.fsum(growing.scheduler_betas(np.arange(10**6), 0.05)) <= 0.05


@pytest.mark.parametrize("c", [1e-3, 0.1, 0.25, 0.499])
@pytest.mark.parametrize("n0", [1, 10, 1000])
def test_improver_rhos_sum_to_at_most_rho(c, n0):
    for horizon in (n0, 10 * n0, n0 + 10**6):
        rhos = growing.improver_rhos(np.arange(n0, horizon + 1), rho=0.3, n0=n0, c=c)
        assert math.fsum(rhos) <= 0.3 * (1 + 1e-12)
    # with the tail, exactly rho: the Hurwitz zeta normalisation
    tail = 0.3 * special.zeta(1 + 2 * c, n0 + 10**6 + 1) / special.zeta(1 + 2 * c, n0)
    assert math.fsum(rhos) + tail == pytest.approx(0.3, rel=1e-9)


def test_integral_normalisation_would_overspend():
    # normalising t^-(1+2c) by its integral from n0 = 1 instead of the zeta sum spends (2c) zeta(1+2c) rho
    # (c = 0.1: 12 % too much), and more for larger c
    assert round(100 * (2 * 0.1 * special.zeta(1.2) - 1)) == 12
    assert 2 * 0.25 * special.zeta(1.5) > 2 * 0.1 * special.zeta(1.2)


# --- BBScheduler ----------------------------------------------------------------------------------


class Recorder:
    """A black box (the package's Laplace baseline) that records the budget state at each call."""

    name = "recorder"

    def __init__(self, budget):
        self.budget, self.calls = budget, []

    def __call__(self, data, workload, *, epsilon, beta, rng):
        self.calls.append((data.n, epsilon, beta, self.budget.spent_epsilon))
        return growing.LaplaceBox()(data, workload, epsilon=epsilon, beta=beta, rng=rng)


def test_bb_scheduler_charges_before_each_run_and_answers_from_the_epoch():
    s, Q = stationary(n0=50, horizon=400), workload()
    budget = dp.PrivacyBudget(1.0)
    box = Recorder(budget)
    result = growing.bb_scheduler(s, box, Q, epsilon=1.0, gamma=0.5, rng=0, budget=budget)
    idx, times = growing.epochs(50, 0.5, 400)
    eps = growing.scheduler_epsilons(idx, epsilon=1.0, gamma=0.5)
    assert [c[0] for c in box.calls] == times.tolist()
    assert np.allclose([c[1] for c in box.calls], eps)
    assert np.allclose([c[3] for c in box.calls], np.cumsum(eps))  # charged before the run
    assert [c.epsilon for c in budget.ledger] == pytest.approx(eps.tolist())
    assert budget.spent_epsilon <= 1.0
    releases = result.info["releases"]
    for t in range(50, 401, 7):
        j = np.searchsorted(times, t, side="right") - 1
        assert releases.at(t) is releases.outputs[j]


def test_bb_scheduler_zcdp_budget_converts_to_epsilon_delta():
    s, Q = stationary(), workload()
    result = growing.bb_scheduler(
        s, growing.LaplaceBox(), Q, epsilon=1.0, gamma=0.5, rng=0, schedule="zcdp", delta=1e-6
    )
    budget = result.info["budget"]
    assert isinstance(budget, dp.ZCDPBudget) and budget.spent <= budget.rho
    assert budget.to_approx_dp(1e-6) <= 1.0 + 1e-9


def test_bb_scheduler_stops_when_a_passed_budget_cannot_pay():
    s, Q = stationary(), workload()
    budget = dp.PrivacyBudget(0.5)
    result = growing.bb_scheduler(
        s, growing.LaplaceBox(), Q, epsilon=1.0, gamma=0.5, rng=0, budget=budget
    )
    assert len(result.info["releases"].outputs) == 1  # eps_0 = 1/3 fits, eps_1 = 2/9 does not
    assert budget.spent_epsilon == pytest.approx(1 / 3)


def test_equal_split_runs_r_times_then_stops():
    s, Q = stationary(), workload()
    result = growing.bb_scheduler(
        s, growing.LaplaceBox(), Q, epsilon=1.0, gamma=0.5, rng=0, schedule="equal", runs=3
    )
    assert np.allclose(result.info["epsilons"], 1 / 3) and len(result.trace) == 3
    assert result.info["releases"].at(400) is result.info["releases"].outputs[-1]


def test_bb_scheduler_error_stays_within_theorem_10_on_a_stationary_stream():
    # Laplace black box, 4 queries: with n0 eps gamma/(1+gamma) large the black-box error is tiny,
    # and Lemma 11 bounds the rest by gamma/(1+gamma)
    s, Q = streams.stationary_stream(P, DOM, n0=2000, horizon=16_000, rng=3), workload()
    result = growing.bb_scheduler(s, growing.LaplaceBox(), Q, epsilon=1.0, gamma=0.5, rng=4)
    errors = growing.max_error_over_time(result, s, Q, range(2000, 16_001, 500))
    bb_bound = theory.laplace_max_error(
        Q.k, 2000, theory.bbscheduler_effective_size(1.0, 0.5, 2000) / 2000, beta=0.05
    )
    assert np.all(errors <= theory.bbscheduler_error_bound(bb_bound, 0.5))


# --- BBImprover ------------------------------------------------------------------------------------


def test_bb_improver_spends_at_most_rho_and_skipping_charges_the_same():
    s, Q = stationary(n0=20, horizon=120), workload()
    full = growing.bb_improver(s, growing.LaplaceBox(), Q, epsilon=1.0, delta=1e-6, rng=0)
    some = growing.bb_improver(
        s, growing.LaplaceBox(), Q, epsilon=1.0, delta=1e-6, rng=0, release_times=[20, 50, 90]
    )
    rho = dp.privacy.approx_dp_to_zcdp(1.0, 1e-6)
    assert len(full.trace) == 101 and full.info["budget"].spent <= rho
    assert some.info["budget"].spent == pytest.approx(full.info["budget"].spent, rel=1e-12)
    assert some.info["releases"].times.tolist() == [20, 50, 90]
    assert full.column("epsilon_spent")[-1] == pytest.approx(full.info["budget"].spent)


def test_bb_improver_stops_when_a_passed_budget_cannot_pay():
    s, Q = stationary(n0=20, horizon=120), workload()
    rho = dp.privacy.approx_dp_to_zcdp(1.0, 1e-6)
    budget = dp.ZCDPBudget(rho / 2)
    result = growing.bb_improver(
        s, growing.LaplaceBox(), Q, epsilon=1.0, delta=1e-6, rng=0, budget=budget
    )
    rhos = growing.improver_rhos(np.arange(20, 121), rho=rho, n0=20, c=0.25)
    assert len(result.trace) == np.searchsorted(np.cumsum(rhos), rho / 2 * (1 + 1e-9), side="right")
    assert budget.spent <= rho / 2 * (1 + 1e-9)


def test_bb_improver_error_falls_as_the_data_grow():
    s, Q = streams.stationary_stream(P, DOM, n0=100, horizon=200_000, rng=5), workload()
    times = [100, 1000, 10_000, 200_000]
    errors = np.mean([growing.max_error_over_time(
        growing.bb_improver(s, growing.LaplaceBox(), Q, epsilon=1.0, delta=1e-6, rng=seed, release_times=times),
        s, Q, times) for seed in range(20)], axis=0)  # fmt: skip
    assert np.all(np.diff(errors) < 0)


# --- private ERM --------------------------------------------------------------------------------


def test_erm_features_and_sensitivity_of_the_minimiser():
    from dpteach import erm

    adult = dp.load_adult("tiny").head(400)
    x, y = erm.one_hot_features(adult, "income>50K")
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0) and set(np.unique(y)) == {-1.0, 1.0}
    lam = 0.1
    theta = erm.minimizer(x, y, lam=lam)
    gen = np.random.default_rng(0)
    for _ in range(10):  # replace one record: ||theta*(D) - theta*(D')|| <= 2 / (n lam)
        i, j = gen.integers(0, 400, size=2)
        x2, y2 = x.copy(), y.copy()
        x2[i], y2[i] = x[j], -y[j]
        assert np.linalg.norm(erm.minimizer(x2, y2, lam=lam) - theta) <= 2 / (400 * lam)
    assert erm.excess_risk(theta, x, y, lam=lam) == pytest.approx(0.0, abs=1e-12)


def test_erm_safe_output_noise_is_laplace_of_the_l1_sensitivity():
    from scipy import stats

    from dpteach import erm

    x, y = np.array([[0.6, 0.8], [1.0, 0.0]]), np.array([1.0, -1.0])
    theta = erm.minimizer(x, y, lam=1.0)
    gen = np.random.default_rng(1)
    noise = np.array(
        [erm.output_perturbation(x, y, lam=1.0, epsilon=0.5, rng=gen) - theta for _ in range(2000)]
    )
    # L1 sensitivity sqrt(d) * 2/(n lam) = sqrt(2) * 2/2; Laplace scale that / eps (+ <= 0.1 %)
    scale = math.sqrt(2) * 1.0 / 0.5
    for b in noise.T:
        assert stats.kstest(b, stats.laplace(scale=scale).cdf).pvalue > 1e-4
        assert stats.kstest(b, stats.laplace(scale=1.3 * scale).cdf).pvalue < 1e-4
    # the released values lie on the safe Laplace grid (floating-point safe)
    g = dp.mechanisms.grid_spacing(math.sqrt(2), 0.5, k=2)
    released = erm.output_perturbation(x, y, lam=1.0, epsilon=0.5, rng=3)
    assert np.all(np.mod(released, g) == 0)


def test_erm_naive_output_noise_radius_is_gamma_distributed():
    from scipy import stats

    from dpteach import erm

    x, y = np.array([[0.6, 0.8], [1.0, 0.0]]), np.array([1.0, -1.0])
    theta = erm.minimizer(x, y, lam=1.0)
    gen = np.random.default_rng(1)
    noise = np.array(
        [
            erm.output_perturbation(x, y, lam=1.0, epsilon=0.5, rng=gen, safe=False) - theta
            for _ in range(2000)
        ]
    )
    radii = np.linalg.norm(noise, axis=1)

    # the direction is uniform (density a function of ||b|| alone): for a uniform angle a,
    # cos(4a) has mean 0 and variance 1/2, so z is about N(0, 1); independent Laplace noise per
    # coordinate (not a function of ||b||) leans towards the axes and is rejected
    def z(b):
        return np.mean(np.cos(4 * np.arctan2(b[:, 1], b[:, 0]))) * math.sqrt(2 * len(b))

    assert abs(z(noise)) < 4.5 < abs(z(gen.laplace(size=noise.shape)))
    scale = 2 / (2 * 1.0 * 0.5)
    assert stats.kstest(radii, stats.gamma(2, scale=scale).cdf).pvalue > 1e-4
    assert (
        stats.kstest(radii, stats.gamma(2, scale=1.3 * scale).cdf).pvalue < 1e-4
    )  # a 30 % wrong scale is rejected


def test_erm_under_bb_scheduler_has_small_excess_risk():
    from dpteach import erm

    adult = dp.load_adult("small")
    s = streams.DatabaseStream(
        streams.DatabaseStream.from_dataset(adult, n0=2000, rng=0).records[:8000],
        adult.domain,
        n0=2000,
    )
    box = erm.LogisticERMBox("income>50K", lam=0.1)
    result = growing.bb_scheduler(s, box, epsilon=1.0, gamma=1.0, rng=1)
    risks = [box.excess_risk(result.info["releases"].at(t), s.at(t)) for t in (2000, 4000, 8000)]
    assert np.all(np.array(risks) >= 0) and max(risks) < 0.1


# --- PMWG ---------------------------------------------------------------------------------------


def test_uniform_update_matches_the_formula_step_by_step():
    s = stationary(n0=30, horizon=80)
    pmwg = growing.PMWG(s, epsilon=10.0, alpha=0.2, rng=0, scale=0.05)
    pmwg.answer(np.array([1.0, 0.0, 0.0, 0.0]))
    p_hat, u = pmwg.p_hat.copy(), np.full(4, 0.25)
    for t in range(30, 80):
        p_hat = t / (t + 1) * p_hat + u / (t + 1)
        pmwg.advance(t + 1)
        assert np.allclose(pmwg.p_hat, p_hat, rtol=1e-12, atol=0)
        assert pmwg.p_hat.min() > 0 and pmwg.p_hat.sum() == pytest.approx(1.0, abs=1e-12)


def _learned_then_adversarial(uniform_update):
    # x_{n0} is all cell 0; PMWG learns it (p_hat of the other cells falls below alpha); then every
    # new entry goes to cell 1
    s = streams.adversarial_stream(dp.Dataset([[0, 0]] * 200, DOM), horizon=1200, rng=0)
    pmwg = growing.PMWG(
        s,
        epsilon=1e4,
        alpha=0.05,
        rng=1,
        scale=0.002,
        uniform_update=uniform_update,
        track_arrivals=True,
    )
    queries = list(np.eye(4)) + list(1 - np.eye(4))
    for _ in range(30):
        for q in queries:
            pmwg.answer(q)
    pmwg.advance(1200)
    arrivals = [e for e in pmwg.trace if e.kind == "arrival"]
    return pmwg, arrivals


def test_potential_rise_per_arrival_obeys_lemma_15():
    pmwg, arrivals = _learned_then_adversarial(True)
    phi_before = pmwg.trace[len(pmwg.trace) - len(arrivals) - 1].potential
    for prev, e in zip([phi_before] + [a.potential for a in arrivals], arrivals):
        assert e.potential - prev <= theory.pmwg_potential_increase(4, e.time - 1, prev) + 1e-12
    assert max(a.potential for a in arrivals) <= math.log(4) + 1e-12


def test_tracking_every_kth_arrival_records_the_same_potentials():
    # track_arrivals=k keeps the arrivals at sizes t with t - n0 a multiple of k, with exactly the
    # potentials that tracking every arrival records there; the mechanism itself is unchanged
    s = streams.adversarial_stream(dp.Dataset([[0, 0]] * 200, DOM), horizon=1200, rng=0)
    runs = {}
    for every in (True, 7):
        m = growing.PMWG(s, epsilon=10.0, alpha=0.05, rng=1, scale=0.01, track_arrivals=every)
        for t in (200, 450, 451, 1200):  # advances of several lengths
            m.advance(t)
            m.answer(np.eye(4)[1])
        runs[every] = m
    every_one = {e.time: e.potential for e in runs[True].trace if e.kind == "arrival"}
    kept = [e for e in runs[7].trace if e.kind == "arrival"]
    assert [e.time for e in kept] == list(range(207, 1201, 7))
    assert all(e.potential == pytest.approx(every_one[e.time], rel=1e-12) for e in kept)
    assert runs[7].column("answer").tolist() == runs[True].column("answer").tolist()
    with pytest.raises(ValueError, match="track_arrivals"):
        growing.PMWG(s, epsilon=1.0, alpha=0.05, rng=1, track_arrivals=0)


def test_without_the_uniform_update_lemma_15_fails():
    pmwg, arrivals = _learned_then_adversarial(False)
    phi = [a.potential for a in arrivals]
    rises = np.diff(phi) - [theory.pmwg_potential_increase(4, e.time - 1) for e in arrivals[1:]]
    assert np.max(rises) > 0 and max(phi) > math.log(4)


def test_uniform_update_caps_relearning_after_growth_into_a_neglected_cell():
    # chapter 05's failure mode: PMW learns a database whose attributes are rarely 1 (its histogram
    # stays a product, so the all-ones cell gets almost no mass); all new entries land there. Without
    # the uniform update the potential exceeds ln|X| and relearning takes far more hard queries than a
    # fresh start; with it, the potential stays below ln|X| (Lemma 15) and relearning costs no more.
    d, n0 = 6, 4000
    cube = dp.Domain.binary(d)
    marginals = dp.MarginalWorkload.all_kway(cube, 1)
    rare = dp.Dataset((np.random.default_rng(0).random((n0, d)) < 0.02).astype(int), cube)
    make = dict(epsilon=1e4, alpha=0.1, rng=1, scale=0.0125)
    probe = growing.PMWG(streams.DatabaseStream(rare.records, cube, n0=n0), **make)
    growing.ask_over_time(probe, probe.stream, marginals, [n0] * 12)
    grown = streams.adversarial_stream(rare, horizon=8 * n0, rng=2, learned=probe.p_hat)
    phi, hard = {}, {}
    for update in (True, False):
        m = growing.PMWG(grown, uniform_update=update, **make)
        growing.ask_over_time(m, grown, marginals, [n0] * 12)
        assert np.array_equal(m.p_hat, probe.p_hat)  # the same run up to n0
        m.advance(8 * n0)
        phi[update] = m.potential()
        hard[update] = int(growing.ask_over_time(m, grown, marginals, [8 * n0] * 40).hard.sum())
    fresh_stream = streams.DatabaseStream(grown.records, cube, n0=8 * n0)
    fresh = growing.PMWG(fresh_stream, **make)
    hard["fresh"] = int(
        growing.ask_over_time(fresh, fresh_stream, marginals, [8 * n0] * 40).hard.sum()
    )
    assert phi[False] > math.log(cube.size) >= phi[True]
    assert hard[False] > 1.3 * max(hard[True], hard["fresh"])
    assert hard[True] <= 1.1 * hard["fresh"]


def test_hard_queries_cost_like_one_over_t():
    s = streams.adversarial_stream(dp.Dataset([[0, 0]] * 100, DOM), horizon=1600, rng=0)
    pmwg = growing.PMWG(s, epsilon=100.0, alpha=0.1, rng=2, scale=0.02)
    for t in (100, 200, 400, 800, 1600):
        pmwg.advance(t)
        for q in np.eye(4):
            pmwg.answer(q)
    instances = [c for c in pmwg.budget.ledger if c.label.startswith("sparse vector")]
    answers = [c for c in pmwg.budget.ledger if c.label.startswith("hard answer")]
    for c in instances:
        t = int(c.label.split("t=")[1])
        assert c.epsilon == pytest.approx(4 / (t * 0.02))
    for c in answers:
        assert c.epsilon == pytest.approx(1 / (int(c.label.split("t=")[1]) * 0.02))
    assert len(answers) == pmwg.hard > 0


def test_nothing_released_once_the_budget_is_spent():
    s = stationary(n0=100, horizon=400)
    pmwg = growing.PMWG(
        s, epsilon=0.2, alpha=0.05, rng=3, scale=0.1
    )  # an instance + answer: 0.5/... at t = 100
    q = np.array([0.0, 0.0, 0.0, 1.0])  # far from uniform's answer: hard
    refused = 0
    for _ in range(20):
        state = (
            pmwg.p_hat.copy(),
            len(pmwg.budget.ledger),
            pmwg._rng.bit_generator.state,
            len(pmwg.trace),
        )
        try:
            pmwg.answer(q)
        except dp.BudgetExceededError:
            refused += 1
            assert np.array_equal(state[0], pmwg.p_hat) and state[1] == len(pmwg.budget.ledger)
            assert state[2] == pmwg._rng.bit_generator.state and state[3] == len(pmwg.trace)
    assert refused > 0 and pmwg.budget.spent_epsilon <= 0.2


def test_a_shared_budget_spent_elsewhere_refuses_before_the_test():
    s = stationary(n0=100, horizon=400)
    budget = dp.PrivacyBudget(1.0)
    pmwg = growing.PMWG(s, epsilon=1.0, alpha=0.2, rng=3, scale=0.1, budget=budget)
    easy = np.full(4, 0.25)  # |q(x) - q(uniform)| = 0: easy, the instance keeps running
    pmwg.answer(easy)
    budget.charge(budget.remaining_epsilon - 0.05, label="another mechanism")  # 0.1 needed
    state = (pmwg.p_hat.copy(), len(budget.ledger), pmwg._rng.bit_generator.state, len(pmwg.trace))
    with pytest.raises(dp.BudgetExceededError, match="hard answer"):
        pmwg.answer(np.array([0.0, 0.0, 0.0, 1.0]))
    assert np.array_equal(state[0], pmwg.p_hat) and state[1] == len(budget.ledger)
    assert state[2] == pmwg._rng.bit_generator.state and state[3] == len(pmwg.trace)
    assert pmwg._sparse.answered == 1  # the refused query was never tested


def test_hard_query_cap_of_corollary_16(monkeypatch):
    # a small stand-in bound so that the cap is reached quickly; queries stay hard (tiny MW steps)
    monkeypatch.setattr(
        theory, "pmwg_hard_query_bound", lambda size, alpha, t, n0: 3 + (t - n0) / 100
    )
    s = streams.stationary_stream(np.array([0.0, 0.0, 0.0, 1.0]), DOM, n0=500, horizon=5000, rng=0)
    pmwg = growing.PMWG(s, epsilon=1e6, alpha=0.05, rng=4, scale=1e-6)
    q = np.array([0.0, 0.0, 0.0, 1.0])
    for _ in range(3):
        pmwg.answer(q)
    assert pmwg.hard == 3
    with pytest.raises(dp.BudgetExceededError, match="Corollary 16"):
        pmwg.answer(q)
    pmwg.advance(600)  # more data raise the bound
    pmwg.answer(q)
    assert pmwg.hard == 4


def test_default_noise_scale_never_exhausts_the_budget():
    # the worst case of pmwg_worst_case_epsilon, summed explicitly over the earliest hard times
    size, alpha, n0, eps = 8, 0.5, 50, 1.0
    scale = theory.pmwg_noise_scale(eps, size, alpha, n0)
    bound = [
        math.floor(theory.pmwg_hard_query_bound(size, alpha, t, n0)) for t in range(n0, 200_000)
    ]
    taus = [n0 + int(np.searchsorted(bound, k)) for k in range(1, bound[-1] + 1)]
    spend = (4 / n0 + sum(5 / t for t in taus)) / scale
    assert spend <= eps


def test_static_pmw_goes_stale_and_pmwg_does_not():
    base = dp.Dataset([[0, 0]] * 400 + [[0, 1]] * 300 + [[1, 0]] * 300, DOM)
    s = streams.adversarial_stream(base, horizon=8000, rng=0)
    Q, times = workload(), [1000, 2000, 4000, 8000]
    pmwg = growing.ask_over_time(
        growing.PMWG(s, epsilon=1.0, alpha=0.1, rng=1, scale=0.005), s, Q, times
    )
    static = growing.ask_over_time(
        dp.mw.OnlinePMW(s.at(1000), epsilon=1.0, alpha=0.1, rng=1), s, Q, times
    )
    assert pmwg.max_error()[-1] < 0.2 < 0.5 < static.max_error()[-1]


# --- audits on a tiny universe and a short stream -----------------------------------------------

ONE = dp.Domain.binary(1)
Q1 = dp.MatrixWorkload([[0.0, 1.0]])


def _bbs_sampler(budget_epsilon=1.0):
    def once(stream, rng):
        result = growing.bb_scheduler(stream, growing.LaplaceBox(), Q1, epsilon=1.0, gamma=1.0, rng=rng,
                                      budget=dp.PrivacyBudget(budget_epsilon))  # fmt: skip
        # which runs' rescaled answers a_i t_i reach 1 (the neighbour's true value): a 2-bit code
        return sum(
            2**i * int(a[0] * t >= 1)
            for i, (a, t) in enumerate(zip(result.info["releases"].outputs, (4, 8)))
        )

    return repeat(once)


# two epochs (t = 4, 8); the neighbour differs in entry 0, seen by both runs
BBS_STREAM = streams.DatabaseStream([[0]] * 8, ONE, n0=4)


def test_bb_scheduler_passes_its_audit():
    spent = math.fsum(growing.scheduler_epsilons([0, 1], epsilon=1.0, gamma=1.0))
    result = audit(
        _bbs_sampler(),
        BBS_STREAM,
        BBS_STREAM.replace(0, [1]),
        epsilon=spent,
        samples=1_000,
        rng=7,
        kind="discrete",
    )
    assert not result.flagged, result


def test_bb_scheduler_without_composition_is_caught(monkeypatch):
    # broken: every epoch gets the whole epsilon and the ledger is read as "the most any epoch
    # spent", as if epochs saw disjoint data (they do not: every run sees entry 0)
    monkeypatch.setattr(
        growing, "scheduler_epsilons", lambda idx, **kw: np.full(len(idx), kw["epsilon"])
    )
    result = audit(
        _bbs_sampler(budget_epsilon=2.0),
        BBS_STREAM,
        BBS_STREAM.replace(0, [1]),
        epsilon=1.0,
        samples=1_000,
        rng=8,
        kind="discrete",
    )
    assert result.flagged and result.epsilon_lower > 1.0, result


class _HorizonCalibrated(growing.PMWG):
    """Broken: each sparse-vector instance calibrated to the sensitivity 1/T of the size the
    stream will reach, not 1/t at the time it starts (its charge is unchanged)."""

    def _make_sparse(self, t, epsilon):
        return dp.AboveThreshold(
            self.alpha, sensitivity=1 / self.stream.horizon, epsilon=epsilon, rng=self._rng
        )


def _pmwg_sampler(cls):
    q = np.array([0.0, 1.0])

    def once(stream, rng):
        pmwg, out = cls(stream, epsilon=1.0, alpha=0.25, rng=rng, scale=4.0), []
        for t in (2, 2, 16):
            pmwg.advance(t)
            before = pmwg.hard
            try:
                value = pmwg.answer(q)
            except dp.BudgetExceededError:  # depends only on the public past
                out.append(-1)
                continue
            out.append(int(np.clip(math.floor(value * 2), -3, 3)) if pmwg.hard > before else None)
        return encode(out)

    return repeat(once)


# x_2 = (cell 1, cell 0); on the neighbour entry 0 is cell 0: |q(x_t) - q(p_hat)| differs by 1/t
PMWG_STREAM = streams.DatabaseStream([[1], [0]] + [[1]] * 254, ONE, n0=2)


def test_pmwg_passes_its_audit():
    result = audit(_pmwg_sampler(growing.PMWG), PMWG_STREAM, PMWG_STREAM.replace(0, [0]), epsilon=1.0,
                   samples=1_000, rng=9, kind="discrete")  # fmt: skip
    assert not result.flagged, result


def test_pmwg_calibrated_to_the_final_size_is_caught():
    result = audit(_pmwg_sampler(_HorizonCalibrated), PMWG_STREAM, PMWG_STREAM.replace(0, [0]), epsilon=1.0,
                   samples=1_000, rng=10, kind="discrete")  # fmt: skip
    assert result.flagged and result.epsilon_lower > 1.0, result


# --- bad input: a clear error, nothing charged ----------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [({"gamma": 0.0}, ValueError, "gamma"), ({"gamma": -1.0}, ValueError, "gamma"),
     ({"gamma": True}, TypeError, "gamma"), ({"epsilon": 0.0}, ValueError, "epsilon"),
     ({"schedule": "fast"}, ValueError, "schedule"), ({"beta": 1.0}, ValueError, "beta")],
)  # fmt: skip
def test_bb_scheduler_bad_input_charges_nothing(kwargs, error, match):
    budget = dp.PrivacyBudget(1.0)
    args = {"epsilon": 1.0, "gamma": 0.5, "rng": 0, "budget": budget} | kwargs
    with pytest.raises(error, match=match):
        growing.bb_scheduler(stationary(), growing.LaplaceBox(), workload(), **args)
    assert budget.ledger == []


def test_stream_over_another_domain_is_refused_before_charging():
    budget = dp.PrivacyBudget(1.0)
    other = dp.MarginalWorkload.all_kway(
        dp.Domain({"a": 2, "b": 2}), 1
    )  # same size, other universe
    with pytest.raises(ValueError, match="different universes"):
        growing.bb_scheduler(
            stationary(), growing.LaplaceBox(), other, epsilon=1.0, gamma=0.5, rng=0, budget=budget
        )
    assert budget.ledger == []
    zbudget = dp.ZCDPBudget(0.1)
    with pytest.raises(ValueError, match="different universes"):
        growing.bb_improver(
            stationary(),
            growing.LaplaceBox(),
            other,
            epsilon=1.0,
            delta=1e-6,
            rng=0,
            budget=zbudget,
        )
    assert zbudget.ledger == []


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [(lambda: streams.stationary_stream(P, DOM, n0=0, horizon=10, rng=0), ValueError, "n0"),
     (lambda: streams.DatabaseStream([[0, 0]] * 5, DOM, n0=6), ValueError, "n0"),
     (lambda: streams.stationary_stream(P, DOM, n0=10, horizon=5, rng=0), ValueError, "horizon"),
     (lambda: streams.stationary_stream(P[:3] / P[:3].sum(), DOM, n0=1, horizon=5, rng=0), ValueError, "length"),
     (lambda: stationary().at(401), ValueError, "horizon"),
     (lambda: growing.epochs(0, 0.5, 10), ValueError, "n0"),
     (lambda: growing.improver_rhos([5], rho=1.0, n0=5, c=0.5), ValueError, "c"),
     (lambda: growing.improver_rhos([4], rho=1.0, n0=5, c=0.2), ValueError, "n0"),
     (lambda: growing.bb_scheduler(P, growing.LaplaceBox(), None, epsilon=1.0, gamma=0.5, rng=0), TypeError, "stream"),
     (lambda: growing.PMWG(stationary(), epsilon=1.0, alpha=1.5, rng=0), ValueError, "alpha"),
     (lambda: growing.PMWG(stationary(), epsilon=1.0, alpha=0.1, rng=0).answer(np.ones(3)), ValueError, "q"),
     (lambda: growing.PMWG(stationary(), epsilon=1.0, alpha=0.1, rng=0).advance(10), ValueError, "t"),
     (lambda: theory.staleness_bound(3, 5), ValueError, "s")],
)  # fmt: skip
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_pmwg_bad_query_charges_nothing():
    pmwg = growing.PMWG(stationary(), epsilon=1.0, alpha=0.1, rng=0, scale=0.05)
    with pytest.raises(ValueError, match="q"):
        pmwg.answer(np.array([0.0, 2.0, 0.0, 0.0]))
    assert pmwg.budget.ledger == [] and pmwg.trace == []


# --- SmallDBG (Theorem 9): BBScheduler with SmallDB (chapter 03, owned by issue-13) ------------


@pytest.mark.skipif(
    not hasattr(theory, "smalldb_size"),
    reason="SmallDB needs chapter 03's theory.smalldb_size (issue-13), merged by the lead",
)
def test_smalldbg_is_bb_scheduler_with_smalldb():
    s = streams.stationary_stream(P, DOM, n0=50, horizon=200, rng=0)
    result = growing.smalldbg(s, workload(), epsilon=1.0, gamma=1.0, alpha=0.3, rng=1)
    idx, times = growing.epochs(50, 1.0, 200)
    assert result.info["times"].tolist() == times.tolist()
    eps = growing.scheduler_epsilons(idx, epsilon=1.0, gamma=1.0)
    assert [c.epsilon for c in result.info["budget"].ledger] == pytest.approx(eps.tolist())
    for out in result.info["releases"].outputs:  # small synthetic databases: m records each
        m = out.info["m"]
        assert np.allclose(out.synthetic * m, np.round(out.synthetic * m))
