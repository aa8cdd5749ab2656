# ruff: noqa: E501
"""Multiplicative weights: the learner's mistake bound, private MW, MWEM and online PMW."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import mw, theory


def _adult_like(d: int, n: int, seed: int) -> dp.Dataset:
    return dp.correlated_data(dp.Domain.binary(d), n, rng=seed, strength=0.6)


UNIVERSES = [
    ("binary(3), 1-way", lambda: dp.MarginalWorkload.all_kway(dp.Domain.binary(3), 1)),
    ("binary(6), 2-way", lambda: dp.MarginalWorkload.all_kway(dp.Domain.binary(6), 2)),
    ("3x4x5, 2-way", lambda: dp.MarginalWorkload.all_kway(dp.Domain({"a": 3, "b": 4, "c": 5}), 2)),
    ("random queries on 64 cells", lambda: dp.random_queries(64, 40, rng=1)),
]


@pytest.mark.parametrize(("name", "make"), UNIVERSES, ids=[u[0] for u in UNIVERSES])
@pytest.mark.parametrize("adversary", ["worst", "smallest", "random"])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_learner_respects_the_mistake_bound_and_the_potential_argument(
    name, make, adversary, alpha
):
    Q = make()
    rng = np.random.default_rng(7)
    p = rng.dirichlet(np.full(Q.domain_size, 0.3))  # a skewed target: many mistakes
    result = mw.learn(p, Q, alpha=alpha, adversary=adversary, rng=3)
    mistakes = result.rounds - 1
    assert mistakes <= theory.mw_mistake_bound(Q.domain_size, alpha)
    potential = result.column("potential")
    # fact 1: starts at most ln|X|; fact 2: never negative; fact 3: falls >= alpha^2/4 per mistake
    # (the lecture's form), in fact > alpha^2/2 with eta = alpha (Exercise 1's sharper inequality)
    assert potential[0] <= math.log(Q.domain_size) + 1e-12
    assert np.all(potential >= -1e-12)
    assert np.all(np.diff(potential) <= -(alpha**2) / 2 + 1e-12)
    assert np.all(
        potential <= math.log(Q.domain_size) - np.arange(mistakes + 1) * alpha**2 / 4 + 1e-9
    )
    # no mistakes left: every query (and its negation) within alpha
    assert np.max(np.abs(result.answers - Q.answer(p))) <= alpha


def test_learner_fails_with_a_step_too_large():
    """Exercise 3: p = (1/2, 1/2, 0, 0), uniform start, q = 1[x = x0] too low by 1/4. A step of
    size eta on 1 - q gives Phi_1 = ln((e^eta + 3)/2) - eta/2: it lowers the potential for
    0 < eta < 2 ln 3 (lecture's eta = alpha = 0.2: 0.693 -> 0.647) and raises it at eta = 6
    (p_1 = (0.993, 0.002, 0.002, 0.002), Phi_1 = 2.31); the best step is eta = ln 3 (0.549)."""
    p = np.array([0.5, 0.5, 0.0, 0.0])
    q = np.array([1.0, 0.0, 0.0, 0.0])
    p_hat = np.full(4, 0.25)
    kl = dp.results.kl_divergence
    assert kl(p, p_hat) == pytest.approx(math.log(2)) and round(math.log(2), 3) == 0.693
    # an MW step of size eta on the mistake 1 - q is a step of -eta on q
    assert round(kl(p, mw.mw_update(p_hat, 1 - q, 0.2)), 3) == 0.647
    too_far = mw.mw_update(p_hat, 1 - q, 6.0)
    np.testing.assert_array_equal(np.round(too_far, 3), [0.993, 0.002, 0.002, 0.002])
    np.testing.assert_allclose(too_far, mw.mw_update(p_hat, q, -6.0))
    assert round(kl(p, too_far), 2) == 2.31 and kl(p, too_far) > kl(p, p_hat)
    for eta in np.linspace(0.01, 4, 400):
        phi = math.log((math.exp(eta) + 3) / 2) - eta / 2
        assert kl(p, mw.mw_update(p_hat, 1 - q, eta)) == pytest.approx(phi)
        assert (phi < math.log(2)) == (eta < 2 * math.log(3))
    assert round(2 * math.log(3), 3) == 2.197 and round(math.log(3), 3) == 1.099
    assert round(kl(p, mw.mw_update(p_hat, 1 - q, math.log(3))), 3) == 0.549


def test_private_mw_spends_exactly_epsilon_and_refuses_to_overspend():
    data = _adult_like(4, 2000, 0)
    Q = dp.MarginalWorkload.all_kway(data.domain, 1)
    budget = dp.PrivacyBudget(1.5)
    result = mw.private_mw(data, Q, epsilon=1.0, alpha=0.3, rng=0, budget=budget)
    rounds = result.info["rounds"]
    assert rounds == math.ceil(theory.mw_mistake_bound(16, 0.3))
    assert 2 * rounds * result.info["eps0"] == pytest.approx(1.0)
    assert budget.spent_epsilon == pytest.approx(1.0)
    assert result.column("epsilon_spent")[-1] <= 1.0 + 1e-12
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(dp.BudgetExceededError):
        mw.private_mw(data, Q, epsilon=1.0, alpha=0.3, rng=gen, budget=budget)
    assert gen.bit_generator.state == state and budget.spent_epsilon == pytest.approx(1.0)


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_private_mw_is_3alpha_accurate_at_the_theorems_n(delta):
    """At n = private_mw_sample_size(beta = 0.05), pure or approximate DP, at most a beta fraction
    of runs may exceed 3 alpha; allow the 1e-6 upper quantile of Binomial(seeds, beta)."""
    dom, alpha, seeds = dp.Domain.binary(4), 0.3, 40
    Q = dp.MarginalWorkload.all_kway(dom, 1)
    n = math.ceil(theory.private_mw_sample_size(dom.size, Q.k, alpha, 1.0, beta=0.05, delta=delta))
    p = np.random.default_rng(1).dirichlet(np.full(dom.size, 0.5))
    failures = 0
    for seed in range(seeds):
        data = dp.from_histogram(p, dom, n, rng=seed)
        result = mw.private_mw(data, Q, epsilon=1.0, alpha=alpha, delta=delta, rng=seed)
        failures += np.max(np.abs(result.answers - Q.answer(data.histogram()))) > 3 * alpha
        assert sum(r.updated for r in result.trace) <= result.info["rounds"]
    assert failures <= stats.binom(seeds, 0.05).ppf(1 - 1e-6)


def test_private_mw_trace_and_snapshots():
    data = _adult_like(4, 50_000, 2)
    Q = dp.MarginalWorkload.all_kway(data.domain, 2)
    result = mw.private_mw(data, Q, epsilon=2.0, alpha=0.2, rng=1, snapshots=[0, 1, 2])
    assert set(result.snapshots) <= {0, 1, 2} and 0 in result.snapshots
    assert result.trace[-1].updated is False or result.rounds == result.info["rounds"]
    assert np.all(np.isfinite(result.column("potential")))
    np.testing.assert_allclose(result.answers, Q.answer(result.synthetic))


def test_mwem_beats_the_uniform_histogram_and_charges_epsilon():
    data = _adult_like(8, 5000, 0)
    Q = dp.MarginalWorkload.all_kway(data.domain, 2)
    true = Q.answer(data.histogram())
    uniform = np.max(np.abs(Q.answer(np.full(256, 1 / 256)) - true))
    budget = dp.PrivacyBudget(1.0)
    result = mw.mwem(data, Q, epsilon=1.0, rounds=10, rng=0, budget=budget)
    assert budget.spent_epsilon == pytest.approx(1.0)
    assert np.max(np.abs(result.answers - true)) < uniform / 3
    assert result.rounds == 10 and result.column("epsilon_spent")[-1] == pytest.approx(1.0)


def test_mwem_on_a_dense_query_workload():
    data = _adult_like(5, 3000, 4)
    Q = dp.random_queries(32, 30, rng=2)
    result = mw.mwem(data, Q, epsilon=1.0, rounds=8, rng=0, iterations=5)
    assert result.rounds == 8 and abs(result.synthetic.sum() - 1) < 1e-9


def test_a_universe_of_a_million_cells():
    data = dp.correlated_data(dp.Domain.binary(20), 10_000, rng=0)
    Q = dp.MarginalWorkload.all_kway(data.domain, 1)
    result = mw.mwem(data, Q, epsilon=1.0, rounds=3, rng=0, iterations=2)
    assert result.synthetic.shape == (2**20,)
    assert np.max(np.abs(result.answers - Q.answer(data.histogram()))) < 0.5
    pmw = mw.private_mw(data, Q, epsilon=1.0, alpha=0.45, rng=0)
    assert pmw.synthetic.shape == (2**20,) and pmw.rounds >= 1


def test_online_pmw_answers_easy_queries_from_p_hat_and_caps_hard_queries():
    data = _adult_like(5, 200_000, 3)
    Q = dp.MarginalWorkload.all_kway(data.domain, 2)
    budget = dp.PrivacyBudget(1.0)
    pmw = mw.OnlinePMW(data, epsilon=1.0, alpha=0.05, rng=0, max_hard=10, budget=budget)
    assert budget.spent_epsilon == pytest.approx(1.0)
    for i in range(Q.k):
        q = Q.query(i)
        before = pmw.p_hat.copy()
        hard_before = pmw.hard
        if pmw.halted:
            with pytest.raises(dp.BudgetExceededError):
                pmw.answer(q)
            break
        a = pmw.answer(q)
        if pmw.hard == hard_before:  # easy: computed from the public p_hat alone
            assert a == pytest.approx(q @ before)
            np.testing.assert_array_equal(pmw.p_hat, before)
    assert pmw.hard <= 10
    assert pmw.hard > 0  # the uniform start is wrong on this correlated data


def test_online_pmw_rejects_bad_queries():
    pmw = mw.OnlinePMW(_adult_like(3, 100, 0), epsilon=1.0, alpha=0.1, rng=0)
    with pytest.raises(ValueError, match="q must have length 8"):
        pmw.answer(np.ones(3))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        pmw.answer(np.full(8, 2.0))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"alpha": 1.5}, "alpha"), ({"alpha": 0}, "alpha"), ({"epsilon": -1}, "epsilon")],
)
def test_private_mw_bad_input(kwargs, match):
    data = _adult_like(3, 100, 0)
    Q = dp.MarginalWorkload.all_kway(data.domain, 1)
    with pytest.raises(ValueError, match=match):
        mw.private_mw(data, Q, **({"epsilon": 1.0, "alpha": 0.2, "rng": 0} | kwargs))


def test_private_mw_approximate_dp_uses_advanced_composition():
    data = _adult_like(4, 20_000, 1)
    Q = dp.MarginalWorkload.all_kway(data.domain, 1)
    budget = dp.PrivacyBudget(1.0, 1e-6)
    result = mw.private_mw(data, Q, epsilon=1.0, alpha=0.2, delta=1e-6, rng=0, budget=budget)
    steps = 2 * result.info["rounds"]
    eps0 = result.info["eps0"]
    assert eps0 == pytest.approx(1.0 / (2 * math.sqrt(2 * steps * math.log(1e6))))
    assert dp.privacy.advanced_composition(eps0, steps, 1e-6)[0] <= 1.0
    assert eps0 > 1.0 / steps  # a larger per-step budget than basic composition gives
    assert budget.spent_epsilon == pytest.approx(1.0) and budget.spent_delta == pytest.approx(1e-6)
    spent = result.column("epsilon_spent")
    assert np.all(np.diff(spent) > 0) and spent[-1] <= 1.0


def test_private_mw_refuses_approximate_dp_above_epsilon_one_before_charging():
    data = _adult_like(3, 1000, 0)
    Q = dp.MarginalWorkload.all_kway(data.domain, 1)
    budget = dp.PrivacyBudget(5.0, 1e-3)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(ValueError, match="epsilon"):
        mw.private_mw(data, Q, epsilon=2.0, alpha=0.2, delta=1e-6, rng=gen, budget=budget)
    assert budget.spent_epsilon == 0 and gen.bit_generator.state == state
    with pytest.raises(ValueError, match="delta"):
        mw.private_mw(data, Q, epsilon=1.0, alpha=0.2, delta=1.5, rng=0)


def test_sample_size_is_about_four_times_the_lectures():
    """Our n asks alpha/2 of each noise (the lecture's 3 alpha needs it) and keeps the
    exponential mechanism's 2 Delta: 4x the lecture's expression, up to the logarithm."""
    for size, k, alpha in [(20, 33, 0.1), (256, 560, 0.1), (2**20, 1000, 0.05)]:
        ours = theory.private_mw_sample_size(size, k, alpha, 1.0)
        lecture = theory.private_mw_sample_size_lecture(size, k, alpha, 1.0)
        rounds = theory.private_mw_rounds(size, alpha)
        log_ratio = math.log(4 * k * rounds / 0.05) / math.log(k * rounds / 0.05)
        assert ours / lecture == pytest.approx(4 * log_ratio)
    # Exercise 4's figures: L = 2,219 and n = 3,268,991 (lecture's expression 755,724)
    assert theory.private_mw_rounds(256, 0.1) == 2219
    assert round(theory.private_mw_sample_size(256, 560, 0.1, 1.0)) == 3268991
    assert round(theory.private_mw_sample_size_lecture(256, 560, 0.1, 1.0)) == 755724


def test_onset_is_where_the_first_round_makes_a_genuine_update():
    """At n_onset(beta) round 1 updates on a query whose true gap exceeds 2 alpha w.p. >= 1 - beta
    (a sufficient condition); far below it the run learns nothing."""
    dom, alpha, beta, seeds = dp.Domain.binary(4), 0.1, 0.2, 60
    Q = dp.MarginalWorkload.all_kway(dom, 1)
    p = np.random.default_rng(3).dirichlet(np.full(dom.size, 0.3))
    closed = Q.with_negations()
    uniform = np.full(dom.size, 1 / dom.size)
    gaps = closed.answer(uniform) - closed.answer(p)
    onset = theory.private_mw_onset(dom.size, Q.k, alpha, 1.0, gaps.max(), beta=beta)
    assert theory.private_mw_onset(dom.size, Q.k, gaps.max() / 2, 1.0, gaps.max()) == math.inf
    data = dp.from_histogram(p, dom, math.ceil(onset), rng=0)
    gaps = closed.answer(uniform) - closed.answer(data.histogram())
    genuine = 0
    for seed in range(seeds):
        first = mw.private_mw(data, Q, epsilon=1.0, alpha=alpha, rng=seed).trace[0]
        genuine += first.updated and gaps[first.query] > 2 * alpha
    assert genuine >= stats.binom(seeds, 1 - beta).ppf(1e-6)
    tiny = dp.from_histogram(p, dom, math.ceil(onset / 100), rng=0)
    truth = Q.answer(tiny.histogram())
    uniform_error = np.max(np.abs(Q.answer(uniform) - truth))
    errors = [np.max(np.abs(mw.private_mw(tiny, Q, epsilon=1.0, alpha=alpha, rng=s).answers - truth))
              for s in range(10)]  # fmt: skip
    assert np.median(errors) >= 0.9 * uniform_error


def test_online_pmw_answers_within_its_stated_bound():
    """theory.online_pmw_error holds for every answer w.p. 0.95: over 20 seeded streams at most the
    1e-6 upper quantile of Binomial(20, 0.05) may fail; a bound without the noise terms (alpha
    alone) must be exceeded somewhere, or the check would have no power."""
    dom = dp.Domain.binary(5)
    pop = dp.from_histogram(
        np.random.default_rng(0).dirichlet(np.full(32, 0.5)), dom, 200_000, rng=0
    )
    stream = dp.random_queries(32, 500, rng=2)
    truth = stream.answer(pop.histogram())
    bound = theory.online_pmw_error(pop.n, 1.0, 0.1, 100, stream.k)
    failures, worst = 0, 0.0
    for seed in range(20):
        pmw = mw.OnlinePMW(pop, epsilon=1.0, alpha=0.1, rng=seed, max_hard=100)
        answers = [pmw.answer(stream.query(i)) for i in range(stream.k) if not pmw.halted]
        error = np.max(np.abs(np.array(answers) - truth[: len(answers)]))
        failures += error > bound
        worst = max(worst, error)
    assert failures <= stats.binom(20, 0.05).ppf(1 - 1e-6)
    assert worst > 0.1  # alpha alone is exceeded: the noise terms of the bound are needed
