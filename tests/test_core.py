# ruff: noqa: E501
"""Domains, datasets, workloads, privacy accounting, traces, figures and widgets."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpteach as dp
from dpteach import privacy, results, viz, widgets

matplotlib.use("Agg")


# --- domains and datasets ------------------------------------------------------------------


def test_ravel_unravel_round_trip():
    dom = dp.Domain({"a": 3, "b": 4, "c": 2})
    records = np.array([[0, 0, 0], [2, 3, 1], [1, 2, 0]])
    idx = dom.ravel(records)
    assert idx.tolist() == [0, 23, 12]
    np.testing.assert_array_equal(dom.unravel(idx), records)
    assert dom.size == 24 and dom.project(["c", "a"]).shape == (2, 3)


def test_dataset_counts_histogram_project_replace():
    dom = dp.Domain({"a": 2, "b": 2})
    data = dp.Dataset([[0, 0], [0, 1], [1, 1], [1, 1]], dom)
    np.testing.assert_array_equal(data.counts(), [1, 1, 0, 2])
    np.testing.assert_allclose(data.histogram(), [0.25, 0.25, 0, 0.5])
    np.testing.assert_array_equal(data.project(["b"]).counts(), [1, 3])
    neighbour = data.replace(0, [1, 0])
    assert neighbour.n == data.n
    assert np.abs(neighbour.histogram() - data.histogram()).sum() == pytest.approx(2 / data.n)


@pytest.mark.parametrize("make", [dp.independent_data, dp.correlated_data])
def test_generators_are_reproducible(make):
    dom = dp.Domain.binary(5)
    a, b, c = make(dom, 300, rng=1), make(dom, 300, rng=1), make(dom, 300, rng=2)
    np.testing.assert_array_equal(a.records, b.records)
    assert not np.array_equal(a.records, c.records)


@pytest.mark.parametrize(("strength", "agreement"), [(0.8, 0.9), (0.3, 0.65), (0.0, 0.5)])
def test_correlated_data_copies_with_the_given_strength(strength, agreement):
    """Attribute j+1 copies attribute j w.p. ``strength`` and is uniform otherwise, so two
    binary neighbours agree w.p. strength + (1 - strength)/2, whatever the first marginal."""
    n = 20_000
    data = dp.correlated_data(dp.Domain.binary(4), n, rng=0, strength=strength)
    agree = np.mean(data.records[:, 1:] == data.records[:, :-1], axis=0)
    assert np.all(np.abs(agree - agreement) < 5 * math.sqrt(0.25 / n))


def test_from_histogram_samples_the_distribution():
    dom = dp.Domain.binary(2)
    data = dp.from_histogram([0.1, 0.2, 0.3, 0.4], dom, 40_000, rng=0)
    # each cell's frequency is within 5 binomial standard errors
    assert np.all(np.abs(data.histogram() - [0.1, 0.2, 0.3, 0.4]) < 5 * math.sqrt(0.25 / 40_000))


# --- workloads -----------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    way=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_marginals_equal_the_dense_matrix_product(sizes, way, seed):
    dom = dp.Domain({f"x{i}": s for i, s in enumerate(sizes)})
    way = min(way, dom.d)
    Q = dp.MarginalWorkload.all_kway(dom, way)
    p = np.random.default_rng(seed).dirichlet(np.ones(dom.size))
    M = Q.matrix()
    assert set(np.unique(M)) <= {0.0, 1.0}
    np.testing.assert_allclose(Q.answer(p), M @ p, atol=1e-12)
    # each marginal is a distribution over its cells
    for m in range(len(Q.marginals)):
        assert Q.answer(p)[Q.marginal_slice(m)].sum() == pytest.approx(1.0)
    N = Q.with_negations()
    np.testing.assert_allclose(N.answer(p), N.matrix() @ p, atol=1e-12)


def test_marginal_order_and_labels():
    dom = dp.Domain({"a": 2, "b": 3})
    Q = dp.MarginalWorkload(dom, [("b", "a")])
    p = np.arange(6) / 15
    table = Q.marginal_tables(p)[0]
    np.testing.assert_allclose(table, p.reshape(2, 3).T)
    assert Q.label(1) == "b=0 & a=1"
    assert Q.with_negations().label(Q.k + 1) == "not(b=0 & a=1)"


def test_random_queries_are_seeded_and_binary():
    a = dp.random_queries(16, 5, rng=3).matrix()
    assert a.shape == (5, 16) and set(np.unique(a)) <= {0.0, 1.0}
    np.testing.assert_array_equal(a, dp.random_queries(16, 5, rng=3).matrix())


# --- privacy accounting --------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 3, 7, 10, 100])
def test_k_spends_of_eps_over_k_succeed_and_the_next_is_refused(k):
    budget = dp.PrivacyBudget(1.0)
    for _ in range(k):
        budget.charge(1.0 / k)
    ledger = list(budget.ledger)
    with pytest.raises(dp.BudgetExceededError):
        budget.charge(1.0 / k)
    assert budget.ledger == ledger  # the refusal changed nothing


def test_delta_budget():
    budget = dp.PrivacyBudget(1.0, 1e-6)
    budget.charge(0.5, 5e-7)
    assert not budget.can_afford(0.1, 6e-7)
    with pytest.raises(dp.BudgetExceededError):
        dp.PrivacyBudget(1.0).charge(0.1, 1e-9)  # a pure budget has no delta to spend


def test_composition_formulas():
    assert privacy.basic_composition([0.1, 0.2], [1e-6, 0]) == pytest.approx((0.3, 1e-6))
    eps, delta = privacy.advanced_composition(0.01, 100, 1e-6)
    assert eps == pytest.approx(
        math.sqrt(200 * math.log(1e6)) * 0.01 + 100 * 0.01 * math.expm1(0.01)
    )
    assert delta == pytest.approx(1e-6)
    step = privacy.advanced_composition_step(0.5, 50, 1e-6)
    assert privacy.advanced_composition(step, 50, 1e-6)[0] <= 0.5


@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.5, 3.0])
def test_zcdp_conversions_round_trip(rho):
    eps = privacy.zcdp_to_approx_dp(rho, 1e-6)
    assert eps == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1e6)))
    assert privacy.approx_dp_to_zcdp(eps, 1e-6) == pytest.approx(rho)
    assert privacy.pure_to_zcdp(0.3) == pytest.approx(0.045)


def test_zcdp_budget():
    budget = dp.ZCDPBudget(0.5)
    budget.charge_pure(0.6)  # 0.18
    budget.charge(0.3)
    with pytest.raises(dp.BudgetExceededError):
        budget.charge(0.1)
    assert budget.spent == pytest.approx(0.48)
    assert budget.to_approx_dp(1e-6) == pytest.approx(privacy.zcdp_to_approx_dp(0.5, 1e-6))


# --- traces, figures, widgets ----------------------------------------------------------------


def test_kl_and_max_error():
    p, q = np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.25, 0.5])
    assert results.kl_divergence(p, q) == pytest.approx(math.log(2))
    assert results.kl_divergence(q, p) == math.inf
    assert results.max_error([0.1, 0.5], [0.2, 0.1]) == pytest.approx(0.4)


def test_result_columns():
    res = results.Result(
        np.ones(2) / 2, np.zeros(1), [results.Round(1, potential=0.5), results.Round(2)]
    )
    np.testing.assert_array_equal(res.column("round"), [1, 2])
    assert res.rounds == 2 and math.isnan(res.column("potential")[1])
    with pytest.raises(ValueError, match="name"):
        res.column("nope")


def test_widget_draws_default_figure_and_redraws_on_change():
    calls = []

    def draw(epsilon, n):
        calls.append((epsilon, n))
        fig, ax = viz.subplots()
        viz.bound(ax, [0, 1], [0, epsilon], "bound")

    box = widgets.interactive_figure(
        draw, epsilon=widgets.log_slider("eps", 1.0, 0.1, 10), n=widgets.int_slider("n", 10, 1, 100)
    )
    assert calls == [(1.0, 10)]
    box.children[0].children[1].value = 20
    assert calls[-1] == (1.0, 20) and len(calls) == 2
    with pytest.raises(ValueError, match="controls"):
        widgets.interactive_figure(draw)


def test_palette_is_the_okabe_ito_set():
    assert len(set(viz.COLORS)) == 8 and viz.PALETTE["blue"] == "#0072B2"


def test_validate_records_copies_unless_asked_and_finds_every_bad_value():
    dom = dp.Domain({"a": 2, "b": 5})
    good = np.array([[0, 4], [1, 0]], dtype=np.int64)
    assert not np.shares_memory(dom.validate_records(good), good)
    assert dom.validate_records(good, copy=False) is good  # ravel's read-only use
    np.testing.assert_array_equal(dom.ravel(good), [4, 5])
    # negative and too-large values are both caught by the one unsigned comparison
    for value, col in ((-1, 0), (2, 0), (-(2**62), 1), (5, 1)):
        bad = good.copy()
        bad[1, col] = value
        with pytest.raises(ValueError, match=rf"records\[1, {col}\] = {value} is outside"):
            dom.validate_records(bad, copy=False)
