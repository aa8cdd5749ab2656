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


@pytest.mark.parametrize("alpha", [0.1, 0.3])
@pytest.mark.parametrize("dom", [dp.Domain.binary(3), dp.Domain({"a": 3, "b": 5})])
def test_mw_dua_never_exceeds_its_update_bound(alpha, dom):
    W = dp.MarginalWorkload.all_kway(dom, 2).with_negations()
    p = np.random.default_rng(0).dirichlet(np.full(dom.size, 0.2))
    true = W.answer(p)
    dua = it.MultiplicativeWeightsDUA(dom.size, alpha=alpha)
    state, updates = dua.initial(), 0
    while True:
        gaps = np.abs(dua.answers(state, W) - true)
        wrong = np.flatnonzero(gaps >= alpha)
        if wrong.size == 0:
            break
        i = int(wrong[np.argmin(gaps[wrong])])  # adversarial: the smallest distinguishing gap
        state = dua.update(state, W.query(i), true[i])
        updates += 1
        assert updates <= dua.bound(alpha)
    assert updates <= theory.mw_mistake_bound(dom.size, alpha)


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


def test_budget_refuses_an_overspending_run_without_releasing_anything():
    budget = dp.PrivacyBudget(0.5)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(dp.BudgetExceededError, match="nothing was released"):
        it.iterative_construction(_data(100), Q, median.HalvingDUA(CANDIDATES), alpha=0.2,
                                  epsilon=1.0, rng=gen, budget=budget)  # fmt: skip
    assert budget.ledger == [] and gen.bit_generator.state == state


def test_accuracy_meets_theorem_8_over_50_seeds():
    """At n = ic_sample_size(beta = 0.1), at most a beta fraction of runs may exceed alpha
    (allowing the 1e-6 upper quantile of Binomial(50, 0.1)). The 8-record candidates contain a
    database within 1/16 < alpha/2 of any distribution on 4 cells, as Claim 1 requires."""
    dua = median.HalvingDUA(CANDIDATES)
    alpha, beta, seeds = 0.25, 0.1, 50
    n = math.ceil(theory.ic_sample_size(dua.bound(alpha / 2), Q.k, alpha, 1.0, beta))
    failures = 0
    for seed in range(seeds):
        data = _data(n, seed)
        result = it.iterative_construction(data, Q, dua, alpha=alpha, epsilon=1.0, rng=seed)
        failures += np.max(np.abs(result.answers - Q.answer(data.histogram()))) > alpha
        assert result.info["updates"] <= dua.bound(alpha / 2)
    assert failures <= stats.binom(seeds, beta).ppf(1 - 1e-6)


def test_mw_dua_run_records_the_potential_and_the_exact_distinguisher():
    data = _data(100_000, 1, dp.Domain.binary(3))
    W = dp.MarginalWorkload.all_kway(data.domain, 2)
    dua = it.MultiplicativeWeightsDUA(8, alpha=0.3)
    result = it.iterative_construction(data, W, dua, alpha=0.3, epsilon=1.0, rng=0)
    assert np.all(np.isfinite(result.column("potential")))
    exact = it.iterative_construction(
        data, W, dua, alpha=0.3, epsilon=1.0, rng=0, distinguisher="exact"
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
