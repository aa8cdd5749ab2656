"""Property-based tests (hypothesis) of the input contract of the core types and mechanisms.

Whatever valid input hypothesis generates, the result has the documented shape and invariants,
inputs are not modified, the same seed gives the same output; whatever invalid number it
generates, the error is a ValueError or TypeError naming the parameter and nothing is charged.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import dpteach as dp
from dpteach import privacy

NAMES = st.text(alphabet="abcdefghij", min_size=1, max_size=3)
DOMAINS = st.dictionaries(NAMES, st.integers(1, 5), min_size=1, max_size=4).map(dp.Domain)
SEEDS = st.integers(0, 2**32 - 1)
ODD_NUMBERS = st.one_of(
    st.just(0),
    st.floats(max_value=0.0),
    st.just(math.nan),
    st.just(math.inf),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
)
POSITIVE = st.floats(1e-6, 1e6)


@st.composite
def datasets(draw):
    domain = draw(DOMAINS)
    n = draw(st.integers(1, 30))
    cols = [draw(st.lists(st.integers(0, s - 1), min_size=n, max_size=n)) for s in domain.shape]
    return dp.Dataset(np.array(cols).T, domain)


@settings(max_examples=100, deadline=None)
@given(DOMAINS, SEEDS)
def test_domain_size_ravel_and_equality(domain, seed):
    assert domain.size == math.prod(domain.shape)
    gen = np.random.default_rng(seed)
    records = np.stack([gen.integers(0, s, 10) for s in domain.shape], axis=1)
    np.testing.assert_array_equal(domain.unravel(domain.ravel(records)), records)
    same = dp.Domain(dict(zip(domain.names, domain.shape, strict=True)))
    assert same == domain and hash(same) == hash(domain)
    if domain.d > 1 and len(set(domain.shape)) > 1:
        reordered = dp.Domain(dict(zip(domain.names[::-1], domain.shape[::-1], strict=True)))
        assert reordered != domain and reordered.size == domain.size


@settings(max_examples=100, deadline=None)
@given(datasets())
def test_dataset_histogram_and_copy(data):
    p = data.histogram()
    assert p.shape == (data.domain.size,) and np.all(p >= 0) and p.sum() == pytest.approx(1)
    records = data.records.copy()
    clone = dp.Dataset(records, data.domain)
    records[0, 0] = -1  # the caller's array is copied, never shared
    np.testing.assert_array_equal(clone.histogram(), p)


@settings(max_examples=60, deadline=None)
@given(datasets(), st.integers(1, 3))
def test_marginal_answers_are_tables_summing_to_one(data, way):
    assume(way <= data.domain.d)
    workload = dp.MarginalWorkload.all_kway(data.domain, way)
    p = data.histogram()
    answers = workload.answer(p)
    assert answers.shape == (workload.k,) and np.all((answers >= 0) & (answers <= 1 + 1e-12))
    for m in range(len(workload.marginals)):
        assert answers[workload.marginal_slice(m)].sum() == pytest.approx(1)
    np.testing.assert_allclose(workload.with_negations().answer(p)[workload.k :], 1 - answers)
    np.testing.assert_array_equal(workload.answer(data), answers)


@settings(max_examples=60, deadline=None)
@given(DOMAINS, DOMAINS)
def test_objects_of_different_universes_are_never_mixed(first, second):
    data = dp.Dataset(np.zeros((1, first.d), dtype=int), first)
    workload = dp.MarginalWorkload.all_kway(second, 1)
    if first == second:
        dp.mw.mwem(data, workload, epsilon=1.0, rounds=1, rng=0)
    else:
        with pytest.raises(ValueError, match="universe"):
            dp.mw.mwem(data, workload, epsilon=1.0, rounds=1, rng=0)


@settings(max_examples=100, deadline=None)
@given(st.floats(0.01, 10), st.lists(st.floats(0, 3), max_size=12))
def test_a_budget_never_overspends_and_a_refusal_changes_nothing(total, charges):
    budget = dp.PrivacyBudget(total)
    for eps in charges:
        before = list(budget.ledger)
        try:
            budget.charge(eps)
        except dp.BudgetExceededError:
            assert budget.ledger == before
        assert budget.spent_epsilon <= total * (1 + 1e-9)


@settings(max_examples=100, deadline=None)
@given(ODD_NUMBERS)
def test_odd_privacy_parameters_are_refused_naming_the_parameter(bad):
    budget = dp.PrivacyBudget(10.0)
    for call, name in [
        (lambda: dp.laplace(0.5, sensitivity=1, epsilon=bad, rng=0, budget=budget), "epsilon"),
        (lambda: dp.laplace(0.5, sensitivity=bad, epsilon=1, rng=0, budget=budget), "sensitivity"),
        (
            lambda: dp.exponential([0, 1], sensitivity=1, epsilon=bad, rng=0, budget=budget),
            "epsilon",
        ),
        (lambda: dp.Sparse(0.5, sensitivity=1, epsilon=bad, rng=0, budget=budget), "epsilon"),
        (lambda: dp.PrivacyBudget(bad), "epsilon"),
        (lambda: dp.ZCDPBudget(bad), "rho"),
    ]:
        with pytest.raises((ValueError, TypeError), match=name):
            call()
    assert budget.ledger == []


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40),
    POSITIVE,
    POSITIVE,
    SEEDS,
)
def test_laplace_contract(values, sensitivity, epsilon, seed):
    value = np.array(values)
    kept = value.copy()
    out = dp.laplace(value, sensitivity=sensitivity, epsilon=epsilon, rng=seed)
    assert out.shape == value.shape and np.all(np.isfinite(out))
    np.testing.assert_array_equal(value, kept)
    g = dp.mechanisms.grid_spacing(sensitivity, epsilon, k=value.size)
    assert np.all(np.mod(out, g) == 0)  # every output on the grid
    np.testing.assert_array_equal(
        out, dp.laplace(value, sensitivity=sensitivity, epsilon=epsilon, rng=seed)
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e12, 1e12), min_size=1, max_size=30), POSITIVE, POSITIVE, SEEDS)
def test_exponential_and_gaussian_contract(scores, sensitivity, epsilon, seed):
    index = dp.exponential(scores, sensitivity=sensitivity, epsilon=epsilon, rng=seed)
    assert isinstance(index, int) and 0 <= index < len(scores)
    out = dp.gaussian(scores, sensitivity=sensitivity, epsilon=epsilon, delta=1e-6, rng=seed)
    assert out.shape == (len(scores),) and np.all(np.isfinite(out))


@settings(max_examples=100, deadline=None)
@given(st.floats(1e-4, 50), st.floats(1e-12, 0.5))
def test_zcdp_conversions_are_consistent(epsilon, delta):
    rho = privacy.approx_dp_to_zcdp(epsilon, delta)
    assert privacy.zcdp_to_approx_dp(rho, delta) == pytest.approx(epsilon, rel=1e-9)
    assert privacy.pure_to_zcdp(epsilon) == pytest.approx(epsilon**2 / 2)
    budget = dp.ZCDPBudget(privacy.pure_to_zcdp(epsilon))
    dp.laplace(0.0, sensitivity=1, epsilon=epsilon, rng=0, budget=budget)  # exactly affordable
    assert budget.spent == pytest.approx(epsilon**2 / 2)
