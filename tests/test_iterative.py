# ruff: noqa: E501
"""Iterative database construction (Lecture 7): DUAs, distinguishers, the IC mechanism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import iterative as it
from dpteach import median, theory
from dpteach.audit import audit, repeat

DOM = dp.Domain.binary(2)
Q = dp.MarginalWorkload.all_kway(DOM, 1)
CANDIDATES = median.small_databases(DOM.size, 8)


def _data(n, seed=0, dom=DOM):
    p = np.random.default_rng(100 + seed).dirichlet(np.ones(dom.size))
    return dp.from_histogram(p, dom, n, rng=seed)


def test_small_databases_are_all_histograms_of_m_records():
    c = median.small_databases(3, 4)
    assert c.shape == (math.comb(6, 4), 3)
    np.testing.assert_allclose(c.sum(axis=1), 1)
    assert len({tuple(row) for row in (c * 4).round().astype(int)}) == c.shape[0]
    with pytest.raises(ValueError, match="more than the limit"):
        median.small_databases(100, 10)


@pytest.mark.parametrize("seed", range(5))
def test_halving_halves_every_update_and_keeps_the_best_candidate(seed):
    dom = dp.Domain.binary(3)
    W = dp.MarginalWorkload.all_kway(dom, 2)
    candidates = median.small_databases(dom.size, 6)
    data = _data(500, seed, dom)
    true = W.answer(data.histogram())
    errors = np.max(np.abs(candidates @ W.matrix().T - true), axis=1)
    best = int(np.argmin(errors))
    dua = median.HalvingDUA(candidates)
    state, updates = dua.initial(), 0
    rng = np.random.default_rng(seed)
    while True:
        current = dua.answers(state, W)
        # an adversary reveals a query whose median answer is farther from the truth than the
        # best candidate's (so the best candidate is on the truth's side)
        wrong = np.flatnonzero(
            np.abs(current - true) > np.abs(candidates[best] @ W.matrix().T - true)
        )
        if wrong.size == 0:
            break
        i = int(rng.choice(wrong))
        before = state.sum()
        state = dua.update(state, W.query(i), true[i])
        updates += 1
        assert state.sum() <= before / 2
        assert state[best]
    assert updates <= dua.bound(0.1)


def _potential_drop(p, p_hat, q, eta):
    """D(p || p_hat) - D(p || p_hat') after one MW step p_hat' ∝ p_hat exp(-eta q)."""
    return dp.results.kl_divergence(p, p_hat) - dp.results.kl_divergence(
        p, dp.mw.mw_update(p_hat, q, eta)
    )


@pytest.mark.parametrize("alpha", [0.1, 0.3])
@pytest.mark.parametrize("dom", [dp.Domain.binary(3), dp.Domain({"a": 3, "b": 5})])
def test_mw_dua_never_exceeds_its_update_bound(alpha, dom):
    """An adversary feeds the MW DUA built for level alpha the smallest alpha-distinguishing
    query (condition 2 of Definition 1) with an estimate just inside alpha of the truth on the
    far side (condition 3): every update lowers the potential by at least alpha^2/4, so there are
    at most B(alpha) = 4 ln|X| / alpha^2 of them."""
    W = dp.MarginalWorkload.all_kway(dom, 2).with_negations()
    p = np.random.default_rng(0).dirichlet(np.full(dom.size, 0.2))
    true = W.answer(p)
    dua = it.MultiplicativeWeightsDUA(dom.size, alpha=alpha)
    state, updates = dua.initial(), 0
    while True:
        current = dua.answers(state, W)
        gaps = np.abs(current - true)
        wrong = np.flatnonzero(gaps >= alpha)
        if wrong.size == 0:
            break
        i = int(wrong[np.argmin(gaps[wrong])])  # adversarial: the smallest distinguishing gap
        v = true[i] + 0.99 * alpha * np.sign(current[i] - true[i])  # condition 3, barely
        new = dua.update(state, W.query(i), v)
        drop = dp.results.kl_divergence(p, state) - dp.results.kl_divergence(p, new)
        assert drop >= dua.eta * gaps[i] - dua.eta**2 - 1e-12 >= alpha**2 / 4 - 1e-12
        state, updates = new, updates + 1
        assert updates <= dua.bound(alpha)
    assert updates <= theory.mw_mistake_bound(dom.size, alpha)


def test_hoeffding_potential_drop_on_random_instances():
    """Hoeffding's lemma: a step with eta on a query with gap g = q(p_hat) - q(p) lowers
    D(p || p_hat) by at least eta g - eta^2/8 (checked on 2,000 random instances, including
    eta > 1 and negative gaps); the elementary eta g - eta^2 is weaker. A claim that is too
    strong, eta g - eta^2/16, must fail on some instance (the check has power)."""
    gen = np.random.default_rng(0)
    too_strong_failed = False
    for _ in range(2_000):
        size = int(gen.integers(2, 12))
        p, p_hat = gen.dirichlet(np.full(size, 0.5)), gen.dirichlet(np.full(size, 0.5))
        q = gen.random(size) if gen.random() < 0.5 else gen.integers(0, 2, size).astype(float)
        eta = float(gen.choice([0.01, 0.1, 0.5, 2.0]))
        g = q @ p_hat - q @ p
        drop = _potential_drop(p, p_hat, q, eta)
        assert drop >= eta * g - eta**2 / 8 - 1e-12
        assert eta * g - eta**2 <= eta * g - eta**2 / 8
        too_strong_failed |= drop < eta * g - eta**2 / 16
    assert too_strong_failed


def test_the_old_step_needed_hoeffding_and_the_constants_of_exercise_4():
    """eta = alpha/2 on an alpha/2-distinguishing query: the elementary bound eta g - eta^2 is 0,
    yet the potential falls (by at least 7 alpha^2/32, Hoeffding). Exercise 4's constants."""
    alpha = 0.2
    eta, g = alpha / 2, alpha / 2
    assert eta * g - eta**2 == pytest.approx(0)
    p_hat = np.array([0.5, 0.5])
    q = np.array([1.0, 0.0])
    p = np.array([0.5 - g, 0.5 + g])  # q(p_hat) - q(p) = g
    assert _potential_drop(p, p_hat, q, eta) >= 7 * alpha**2 / 32 > 0
    # B(alpha/2) <= ln|X| / min drop, in units of ln|X| / alpha^2
    assert round(128 / 15, 2) == 8.53  # eta = alpha/4: drop alpha^2/8 - alpha^2/128
    assert round(32 / 7, 2) == 4.57  # eta = alpha/2: drop alpha^2/4 - alpha^2/32
    assert 1 / (4 * g * g - (4 * g) ** 2 / 8) * alpha**2 == pytest.approx(2)  # eta = 4g = 2 alpha
    assert 1 / (alpha / 4 * g - (alpha / 4) ** 2) * alpha**2 == pytest.approx(16)  # what we use


def test_ic_refuses_a_mw_dua_built_for_another_level():
    dua = it.MultiplicativeWeightsDUA(4, alpha=0.2)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(
        ValueError, match=r"level alpha=0.2 .*MultiplicativeWeightsDUA\(4, alpha=0.1\)"
    ):
        it.iterative_construction(_data(100), Q, dua, alpha=0.2, epsilon=1.0, rng=gen)
    assert gen.bit_generator.state == state
    result = it.iterative_construction(_data(100), Q, dua, alpha=0.4, epsilon=1.0, rng=0)
    assert result.info["bound"] == pytest.approx(theory.mw_mistake_bound(4, 0.2))
    with pytest.raises(ValueError, match="alpha must be in"):
        it.MultiplicativeWeightsDUA(4, alpha=1.0)


def test_every_update_of_an_ic_run_is_alpha_half_distinguishing_and_lowers_the_potential():
    """At a large n (the good event of Theorem 5 holds for this seed), each update of IC with
    the MW DUA is on a query with true gap >= alpha/2, and the potential falls by at least
    eta gap - eta^2 >= (alpha/2)^2 / 4."""
    dom = dp.Domain.binary(3)
    W = dp.MarginalWorkload.all_kway(dom, 2)
    data = dp.correlated_data(dom, 2_000_000, rng=3)
    p, alpha = data.histogram(), 0.3
    dua = it.MultiplicativeWeightsDUA(dom.size, alpha=alpha / 2)
    run = it.iterative_construction(
        data, W, dua, alpha=alpha, epsilon=1.0, rng=0, snapshots=range(10_000)
    )
    assert run.info["updates"] >= 5
    potentials = [run.info["initial_potential"], *run.column("potential")]
    for r in run.trace:
        if not r.updated:
            continue
        before = run.snapshots[r.round - 1]
        gap = abs(W.query(r.query) @ (p - before))
        assert gap >= alpha / 2
        drop = potentials[r.round - 1] - potentials[r.round]
        assert drop >= dua.eta * gap - dua.eta**2 >= (alpha / 2) ** 2 / 4 - 1e-12


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_privacy_accounting_matches_theorem_4(delta):
    data = _data(2000)
    dua = median.HalvingDUA(CANDIDATES)
    budget = dp.PrivacyBudget(1.0, 1e-5)
    result = it.iterative_construction(
        data, Q, dua, alpha=0.2, epsilon=0.8, delta=delta, rng=0, budget=budget
    )
    rounds, eps0 = result.info["rounds"], result.info["eps0"]
    assert eps0 == pytest.approx(theory.ic_epsilon0(0.8, rounds, delta))
    if delta == 0:
        assert 2 * rounds * eps0 == pytest.approx(0.8)  # Theorem 4's total
        assert budget.spent_epsilon == pytest.approx(2 * result.rounds * eps0)  # charged per step
        assert len(budget.ledger) == 2 * result.rounds
    else:
        assert dp.privacy.advanced_composition(eps0, 2 * rounds, delta)[0] <= 0.8
        assert (budget.spent_epsilon, budget.spent_delta) == pytest.approx((0.8, delta))
    spent = result.column("epsilon_spent")
    steps = 2 * result.column("round")
    assert spent == pytest.approx([it.privacy_spent(eps0, int(m), delta) for m in steps])
    assert spent[-1] <= 0.8 + 1e-12


def test_epsilon_spent_uses_advanced_composition_when_delta_is_positive():
    """With delta > 0 the trace's epsilon is min(basic, advanced composition at delta): basic
    early, advanced (strictly smaller) once enough steps have run; all 2B steps stay within
    epsilon, as Theorem 4 says; 2 t eps_0 (the old trace) overstates it."""
    eps0, delta, B = theory.ic_epsilon0(1.0, 1_199, 1e-6), 1e-6, 1_199
    assert it.privacy_spent(eps0, 2, delta) == pytest.approx(2 * eps0)
    late = it.privacy_spent(eps0, 200, delta)
    assert late == pytest.approx(dp.privacy.advanced_composition(eps0, 200, delta)[0])
    assert late < 200 * eps0
    assert it.privacy_spent(eps0, 2 * B, delta) <= 1.0 < 2 * B * eps0
    assert it.privacy_spent(eps0, 0, delta) == 0.0
    assert it.privacy_spent(0.01, 50) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="steps"):
        it.privacy_spent(0.01, -1)
    tiny = dp.load_adult("tiny")
    W = dp.MarginalWorkload.all_kway(tiny.domain, 2)
    dua = it.MultiplicativeWeightsDUA(tiny.domain.size, alpha=0.1)
    run = it.iterative_construction(tiny, W, dua, alpha=0.2, epsilon=1.0, delta=delta, rng=1)
    assert run.info["rounds"] == B
    t = run.rounds
    assert run.trace[-1].epsilon_spent < 2 * t * run.info["eps0"]
    exact = it.iterative_construction(
        tiny, W, dua, alpha=0.2, epsilon=1.0, delta=delta, rng=1, distinguisher="exact"
    )
    assert all(math.isinf(r.epsilon_spent) for r in exact.trace)


def test_the_exact_distinguisher_refuses_a_budget():
    budget = dp.PrivacyBudget(5.0)
    with pytest.raises(ValueError, match="not private"):
        it.iterative_construction(_data(100), Q, median.HalvingDUA(CANDIDATES), alpha=0.2,
                                  epsilon=1.0, rng=0, budget=budget, distinguisher="exact")  # fmt: skip
    assert budget.ledger == []


def test_budget_refuses_an_overspending_run_without_releasing_anything():
    budget = dp.PrivacyBudget(0.5)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(dp.BudgetExceededError, match="nothing was released"):
        it.iterative_construction(_data(100), Q, median.HalvingDUA(CANDIDATES), alpha=0.2,
                                  epsilon=1.0, rng=gen, budget=budget)  # fmt: skip
    assert budget.ledger == [] and gen.bit_generator.state == state


class _WrongSideHalving(median.HalvingDUA):
    """A broken halving DUA (negative control): it reflects the estimate about the median, so
    it keeps the wrong half and can discard the good candidate."""

    def update(self, state, q, v):
        m = np.median((self.candidates @ q)[state])
        return super().update(state, q, 2 * m - v)


@pytest.mark.parametrize("broken", [False, True])
def test_accuracy_meets_theorem_8_over_50_seeds(broken):
    """At n = ic_sample_size(beta = 0.1), at most a beta fraction of runs may exceed alpha
    (allowing the 1e-6 upper quantile of Binomial(50, 0.1)). The 8-record candidates contain a
    database within 1/16 < alpha/2 of any distribution on 4 cells, as Claim 1 requires. The same
    check must reject a halving DUA that updates to the wrong side."""
    dua = (_WrongSideHalving if broken else median.HalvingDUA)(CANDIDATES)
    alpha, beta, seeds = 0.25, 0.1, 50
    n = math.ceil(theory.ic_sample_size(dua.bound(alpha / 2), Q.k, alpha, 1.0, beta))
    failures = 0
    for seed in range(seeds):
        data = _data(n, seed)
        result = it.iterative_construction(data, Q, dua, alpha=alpha, epsilon=1.0, rng=seed)
        failures += np.max(np.abs(result.answers - Q.answer(data.histogram()))) > alpha
        assert broken or result.info["updates"] <= dua.bound(alpha / 2)
    allowed = stats.binom(seeds, beta).ppf(1 - 1e-6)
    assert (failures > allowed) if broken else (failures <= allowed)


def test_mw_dua_run_records_the_potential_and_the_exact_distinguisher():
    data = _data(100_000, 1, dp.Domain.binary(3))
    W = dp.MarginalWorkload.all_kway(data.domain, 2)
    dua = it.MultiplicativeWeightsDUA(8, alpha=0.15)
    result = it.iterative_construction(data, W, dua, alpha=0.3, epsilon=1.0, rng=0)
    assert np.all(np.isfinite(result.column("potential")))
    exact = it.iterative_construction(
        data, W, dua, alpha=0.3, epsilon=1.0, rng=0, distinguisher="exact"
    )
    assert result.info["initial_potential"] == pytest.approx(
        dp.results.kl_divergence(data.histogram(), np.full(8, 1 / 8))
    )
    assert exact.trace[0].query == int(
        np.argmax(np.abs(W.answer(np.full(8, 1 / 8)) - W.answer(data.histogram())))
    )


def test_ic_passes_its_audit():
    data = dp.Dataset([[0, 0]] * 6, DOM)
    dua = median.HalvingDUA(median.small_databases(DOM.size, 2))

    def once(d, rng):
        r = it.iterative_construction(d, Q, dua, alpha=0.3, epsilon=1.0, rng=rng)
        return r.info["updates"] * 100 + (r.trace[0].query or 0)

    result = audit(
        repeat(once),
        data,
        data.replace(0, [1, 1]),
        epsilon=1.0,
        samples=3_000,
        rng=0,
        kind="discrete",
    )
    assert not result.flagged, result


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [({"alpha": 0}, ValueError, "alpha"), ({"epsilon": -1}, ValueError, "epsilon"),
     ({"distinguisher": "oracle"}, ValueError, "distinguisher"), ({"delta": 1.0}, ValueError, "delta")],
)  # fmt: skip
def test_bad_input(kwargs, error, match):
    args = {"alpha": 0.2, "epsilon": 1.0, "rng": 0} | kwargs
    with pytest.raises(error, match=match):
        it.iterative_construction(_data(100), Q, median.HalvingDUA(CANDIDATES), **args)


# --- theory: Theorem 8, ours and as stated ---------------------------------------------------


def test_ic_sample_size_uses_the_rounds_the_mechanism_runs():
    """B(alpha/2) = log2 969 = 9.92 is run as 10 rounds: eps_0 and the union bound use 10."""
    k, alpha, beta = 4, 0.2, 0.05
    bound = math.log2(969)
    rounds = 10
    eps0 = 1.0 / (2 * rounds)
    expected = (
        4 * (2 * math.log(2 * k * rounds / beta) + math.log(2 * rounds / beta)) / (alpha * eps0)
    )
    assert theory.ic_sample_size(bound, k, alpha, 1.0, beta) == pytest.approx(expected)
    assert theory.ic_sample_size(9.2, k, alpha, 1.0, beta) == pytest.approx(expected)
    run = it.iterative_construction(_data(1000), Q, median.HalvingDUA(median.small_databases(4, 16)),
                                    alpha=alpha, epsilon=1.0, rng=0)  # fmt: skip
    assert run.info["rounds"] == rounds and run.info["eps0"] == pytest.approx(eps0)


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_theorem_8_as_stated_and_the_ratio_of_ours(delta):
    """The lecture's Theorem 8 solved for n: 8B ln(k/gamma)/(alpha eps) (pure) or
    16 sqrt(B ln(1/delta)) ln(k/gamma)/(alpha eps), gamma = beta/(2B). Ours is larger by
    (2 ln(2kB/beta) + ln(2B/beta)) / ln(2kB/beta), between 2 and 3 (2.81 for the chapter's
    halving example at n = 10,000, 2.74 for the MW DUA on Adult)."""
    k, alpha, beta, B = 24, 0.3, 0.05, 1_199
    gamma = beta / (2 * B)
    factor = 8 * B if delta == 0 else 16 * math.sqrt(B * math.log(1 / delta))
    stated = factor * math.log(k / gamma) / (alpha * 1.0)
    assert theory.ic_sample_size_lecture(B, k, alpha, 1.0, beta, delta) == pytest.approx(stated)
    ratio = theory.ic_sample_size(B, k, alpha, 1.0, beta, delta) / stated
    l1, l2 = math.log(2 * k * B / beta), math.log(2 * B / beta)
    assert ratio == pytest.approx((2 * l1 + l2) / l1)
    assert 2 < ratio < 3


def test_the_chapters_ratios_and_alphas():
    halving = median.HalvingDUA(median.small_databases(4, 16))
    ours = theory.ic_alpha(halving.bound, 4, 10_000, 1.0)
    args = (halving.bound(ours), 4, ours, 1.0)
    assert round(theory.ic_sample_size(*args) / theory.ic_sample_size_lecture(*args), 2) == 2.81

    def mw_bound(a):
        return theory.mw_mistake_bound(20, a / 2)

    ours = theory.ic_alpha(mw_bound, 24, 48_842, 1.0, delta=1e-6)
    args = (mw_bound(ours), 24, ours, 1.0, 0.05, 1e-6)
    assert round(theory.ic_sample_size(*args) / theory.ic_sample_size_lecture(*args), 2) == 2.74


@pytest.mark.parametrize("lecture", [False, True])
def test_ic_alpha_is_the_smallest_guaranteed_alpha_or_none(lecture):
    alpha_of = theory.ic_alpha_lecture if lecture else theory.ic_alpha
    size_of = theory.ic_sample_size_lecture if lecture else theory.ic_sample_size

    def bound_of(a):  # the MW DUA's B(alpha/2) on 8 cells
        return theory.mw_mistake_bound(8, a / 2)

    a = alpha_of(bound_of, 12, 500_000, 1.0)
    assert a is not None and 0 < a < 1
    assert size_of(bound_of(a), 12, a, 1.0) <= 500_000
    assert size_of(bound_of(0.999 * a), 12, 0.999 * a, 1.0) > 500_000
    assert alpha_of(bound_of, 12, 1_000, 1.0) is None  # no alpha < 1: no placeholder value
    with pytest.raises(ValueError, match="n"):
        alpha_of(bound_of, 12, 0, 1.0)


def test_private_mw_and_ic_with_the_mw_dua_differ_as_the_chapter_says():
    """At the same certificate 3 alpha_N, IC runs ceil(16 ln|X| / (3 alpha_N)^2) rounds at
    eps/(2B) and private MW ceil(4 ln|X| / alpha_N^2): 16/36 as many (the chapter's table)."""
    a_N, dom = 0.05, dp.Domain.binary(3)
    W = dp.MarginalWorkload.all_kway(dom, 2)
    data = dp.correlated_data(dom, 1_000, rng=3)
    pmw = dp.mw.private_mw(data, W, epsilon=1.0, alpha=a_N, rng=0)
    ic_dua = it.MultiplicativeWeightsDUA(8, alpha=1.5 * a_N)
    ic = it.iterative_construction(data, W, ic_dua, alpha=3 * a_N, epsilon=1.0, rng=0)
    assert ic.info["rounds"] == math.ceil(16 * math.log(8) / (3 * a_N) ** 2)
    assert pmw.info["rounds"] == math.ceil(4 * math.log(8) / a_N**2)
    assert ic.info["rounds"] / pmw.info["rounds"] == pytest.approx(16 / 36, rel=1e-3)
    assert ic_dua.eta == pytest.approx(3 * a_N / 4) and round(16 / 36, 3) == 0.444
