"""SmallDB (Blum-Ligett-Roth): its output, its distribution, its privacy audit and its errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import median, smalldb, theory
from dpteach.audit import audit

DOM = dp.Domain.binary(3)
DATA = dp.correlated_data(DOM, 300, rng=0)
WORKLOAD = dp.MarginalWorkload.all_kway(DOM, 2)


def test_output_is_a_database_of_m_records_and_its_answers():
    result = smalldb.smalldb(DATA, WORKLOAD, epsilon=1.0, alpha=0.5, rng=1)
    m = theory.smalldb_size(WORKLOAD.k, 0.5)
    assert m == math.ceil(math.log(WORKLOAD.k) / 0.25) == result.info["m"]
    counts = result.synthetic * m
    assert np.allclose(counts, np.round(counts)) and round(counts.sum()) == m
    assert np.allclose(result.answers, WORKLOAD.answer(result.synthetic))
    assert result.info["candidates"] == math.comb(DOM.size + m - 1, m)
    assert "1-DP" in result.info["privacy"]
    error = np.max(np.abs(result.answers - WORKLOAD.answer(DATA.histogram())))
    assert result.trace[0].max_error == pytest.approx(error)


def test_same_seed_same_database():
    a = smalldb.smalldb(DATA, WORKLOAD, epsilon=1.0, alpha=0.5, rng=7)
    b = smalldb.smalldb(DATA, WORKLOAD, epsilon=1.0, alpha=0.5, rng=7)
    assert np.array_equal(a.synthetic, b.synthetic)


def test_scores_are_minus_the_max_error_of_every_candidate():
    candidates = median.small_databases(DOM.size, 3)
    true = WORKLOAD.answer(DATA.histogram())
    expected = [-np.max(np.abs(WORKLOAD.answer(c) - true)) for c in candidates]
    assert np.allclose(smalldb.scores(candidates, WORKLOAD.matrix(), true), expected)


def test_chunked_scores_equal_unchunked(monkeypatch):
    candidates = median.small_databases(DOM.size, 4)
    true = WORKLOAD.answer(DATA.histogram())
    whole = smalldb.scores(candidates, WORKLOAD.matrix(), true)
    monkeypatch.setattr(smalldb, "CHUNK_ENTRIES", 7 * WORKLOAD.k)  # 7 candidates per chunk
    assert np.array_equal(smalldb.scores(candidates, WORKLOAD.matrix(), true), whole)


def test_choice_follows_the_exponential_mechanism():
    """Chi-square test of 20,000 choices against P(y) ∝ exp(eps n u(y) / 2); the same test
    rejects the distribution without the factor 2."""
    small = DATA.head(40)
    sampler = smalldb.audit_sampler(WORKLOAD, epsilon=1.0, alpha=0.5, m=2)
    draws = sampler(small, np.random.default_rng(3), 20_000)
    candidates = median.small_databases(DOM.size, 2)
    u = smalldb.scores(candidates, WORKLOAD.matrix(), WORKLOAD.answer(small.histogram()))
    observed = np.bincount(draws, minlength=len(u))

    def pvalue(factor):
        w = np.exp(factor * small.n * (u - u.max()))
        expected = 20_000 * w / w.sum()
        keep = expected > 5
        obs = np.r_[observed[keep], observed[~keep].sum()]
        exp = np.r_[expected[keep], expected[~keep].sum()]
        return stats.chisquare(obs, exp).pvalue

    assert pvalue(0.5) > 1e-4
    assert pvalue(1.0) < 1e-4


def test_accuracy_within_the_theorem_on_most_seeds():
    """Max error <= alpha + 2 ln(C/beta)/(eps n) w.p. >= 1 - beta (beta = 0.05): at most a few
    failures in 20 seeds (P[> 4 of 20] < 0.02 under the theorem)."""
    big = dp.correlated_data(DOM, 20_000, rng=5)
    bound = theory.smalldb_max_error(DOM.size, WORKLOAD.k, big.n, 1.0, 0.5, beta=0.05)
    true = WORKLOAD.answer(big.histogram())
    errors = [
        np.max(np.abs(smalldb.smalldb(big, WORKLOAD, epsilon=1.0, alpha=0.5, rng=s).answers - true))
        for s in range(20)
    ]
    assert sum(e > bound for e in errors) <= 4


# --- privacy audit on a tiny universe -------------------------------------------------------------

TINY = dp.Domain.binary(2)
TINY_WORKLOAD = dp.MarginalWorkload(TINY, [("x0",), ("x1",), ("x0", "x1")])
D = dp.Dataset([[0, 0]] * 3 + [[1, 1]], TINY)
D_PRIME = D.replace(3, [0, 0])


def test_smalldb_passes_its_audit():
    sampler = smalldb.audit_sampler(TINY_WORKLOAD, epsilon=1.0, alpha=0.5, m=2)
    result = audit(sampler, D, D_PRIME, epsilon=1.0, samples=100_000, rng=1, kind="discrete")
    assert not result.flagged, result


def test_broken_smalldb_with_a_sum_score_is_caught():
    """Scoring by the *sum* of errors (sensitivity k/n) while calibrating for 1/n is caught."""

    def broken(data, rng, size):
        candidates = median.small_databases(TINY.size, 2)
        true = TINY_WORKLOAD.answer(data.histogram())
        u = -np.abs(candidates @ TINY_WORKLOAD.matrix().T - true).sum(axis=1)
        return dp.exponential(u, sensitivity=1 / data.n, epsilon=1.0, rng=rng, size=size)

    result = audit(broken, D, D_PRIME, epsilon=1.0, samples=100_000, rng=1, kind="discrete")
    assert result.flagged, result


# --- bad input: a clear error, nothing charged, no random draw ------------------------------------


class _Untouchable(np.random.Generator):
    """A generator that fails the test if anything draws from it."""

    def __getattribute__(self, name):
        if name in ("gumbel", "random", "normal", "integers", "laplace", "choice"):
            raise AssertionError(f"rng.{name} was called on a refused input")
        return super().__getattribute__(name)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"m": 0}, ValueError, "m must be >= 1"),
        ({"m": 2.0}, TypeError, "m must be an integer"),
        ({"alpha": 0.0}, ValueError, "alpha must be > 0"),
        ({"alpha": 1.5}, ValueError, "alpha must be in"),
        ({"epsilon": -1.0}, ValueError, "epsilon must be > 0"),
        ({"epsilon": float("nan")}, ValueError, "epsilon must be finite"),
        ({"alpha": 0.05}, ValueError, r"SmallDB cannot enumerate .* more than the limit 2,000,000"),
        ({"m": 40}, ValueError, r"SmallDB cannot enumerate .* databases of m=40"),
    ],
)
def test_bad_input_is_refused_before_charging(kwargs, error, match):
    budget = dp.PrivacyBudget(10.0)
    args = {"epsilon": 1.0, "alpha": 0.5, "rng": _Untouchable(np.random.PCG64(0))} | kwargs
    with pytest.raises(error, match=match):
        smalldb.smalldb(DATA, WORKLOAD, budget=budget, **args)
    assert budget.ledger == []


def test_mismatched_universes_are_refused():
    other = dp.Domain({"a": 2, "b": 4})  # same size 8, different universe
    workload = dp.MarginalWorkload.all_kway(other, 1)
    budget = dp.PrivacyBudget(1.0)
    with pytest.raises(ValueError, match="different universes"):
        smalldb.smalldb(DATA, workload, epsilon=1.0, alpha=0.5, rng=0, budget=budget)
    small = dp.MatrixWorkload(np.ones((2, 4)))
    with pytest.raises(ValueError, match="different universes"):
        smalldb.smalldb(DATA, small, epsilon=1.0, alpha=0.5, rng=0, budget=budget)
    with pytest.raises(TypeError, match="data must be a dpteach.Dataset"):
        smalldb.smalldb(DATA.histogram(), WORKLOAD, epsilon=1.0, alpha=0.5, rng=0)
    assert budget.ledger == []


def test_budget_is_charged_once_and_a_refusal_releases_nothing():
    budget = dp.PrivacyBudget(1.5)
    smalldb.smalldb(DATA, WORKLOAD, epsilon=1.0, alpha=0.5, rng=0, budget=budget)
    assert budget.spent_epsilon == 1.0 and len(budget.ledger) == 1
    with pytest.raises(dp.BudgetExceededError):
        smalldb.smalldb(DATA, WORKLOAD, epsilon=1.0, alpha=0.5, rng=0, budget=budget)
    assert len(budget.ledger) == 1


def test_recap_sample_sizes_invert_their_error_bounds():
    """Each of the recap's sample sizes is the n at which its max-error bound reaches the target
    (2 alpha for SmallDB run at alpha), and the table compares at equal certified error: every row
    certifies alpha (SmallDB run at alpha/2, chapter 04's private MW, 3 alpha-accurate, at
    alpha/3, in both its (eps, delta) and pure-DP versions)."""
    k, alpha, eps, delta = 100, 0.05, 1.0, 1e-6
    pairs = [
        (theory.gaussian_sample_size(k, alpha, eps, delta),
         lambda n: theory.gaussian_max_error(k, n, eps, delta), alpha),
        (theory.laplace_sample_size(k, alpha, eps),
         lambda n: theory.laplace_max_error(k, n, eps), alpha),
        (theory.smalldb_sample_size(8, k, alpha, eps),
         lambda n: theory.smalldb_max_error(8, k, n, eps, alpha), 2 * alpha),
    ]  # fmt: skip
    for size, error, target in pairs:
        assert error(math.ceil(size)) <= target + 1e-12 < error(math.floor(size))
    rows = {r["mechanism"]: r for r in theory.recap_table(2**10, k, alpha, eps, delta)}
    assert rows["Gaussian"]["n"] == theory.gaussian_sample_size(k, alpha, eps, delta)
    assert rows["Laplace"]["n"] == theory.laplace_sample_size(k, alpha, eps)
    # SmallDB's row certifies alpha, not 2 alpha: its bound at the row's n is alpha
    small = rows["SmallDB"]
    assert small["run_alpha"] == alpha / 2
    bound = lambda n: theory.smalldb_max_error(2**10, k, n, eps, alpha / 2)  # noqa: E731
    assert bound(math.ceil(small["n"])) <= alpha + 1e-12 < bound(math.floor(small["n"]))
    assert rows["MW, pure DP"]["n"] == theory.private_mw_sample_size(2**10, k, alpha / 3, eps)
    assert rows["MW (eps, delta): notes"]["n"] == theory.private_mw_sample_size(
        2**10, k, alpha / 3, eps, delta=delta
    )
    assert {r["run_alpha"] for r in rows.values()} == {alpha, alpha / 2, alpha / 3}
    # at equal certified error the rows need more people than at their own targets
    assert small["n"] > theory.smalldb_sample_size(2**10, k, alpha, eps)
    # halving alpha: the notes' (eps, delta) MW grows like 1/alpha^2 (times a log), pure DP's
    # like 1/alpha^3
    grow = {
        d: theory.private_mw_sample_size(2**10, k, alpha / 2, eps, delta=d)
        / theory.private_mw_sample_size(2**10, k, alpha, eps, delta=d)
        for d in (delta, 0.0)
    }
    assert 4 < grow[delta] < 6 and 8 < grow[0.0] < 12
