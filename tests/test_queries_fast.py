"""The fast marginal primitives (issue 15): staged tables, shared tables, in-place MW updates.

Every fast path is checked against a straightforward reference (a reshape and a sum; a dense
query vector and :func:`dpteach.mw.mw_update`) on random histograms, over many attribute orders
and non-binary domains. Speed itself is measured in ``benchmarks/bench_marginals.py``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpteach as dp
from dpteach import mw, queries
from dpteach.queries import MarginalWorkload

SHAPES = [(2,) * 12, (3, 5, 1, 7, 2, 4, 3), (1000, 3), (7, 300, 2), (5,), (1,), (4, 1, 1, 2)]


def domain_of(shape) -> dp.Domain:
    return dp.Domain({f"a{i}": n for i, n in enumerate(shape)})


def reference_table(p, shape, axes):
    others = tuple(a for a in range(len(shape)) if a not in axes)
    kept = sorted(axes)
    return np.transpose(np.reshape(p, shape).sum(axis=others), [kept.index(a) for a in axes])


def random_histogram(size, rng, zeros=0.0):
    p = rng.random(size) ** 3
    p[rng.random(size) < zeros] = 0.0
    if p.sum() == 0:
        p[0] = 1.0
    return p / p.sum()


@pytest.mark.parametrize("shape", SHAPES)
def test_table_equals_the_reference_in_every_attribute_order(shape):
    rng = np.random.default_rng(len(shape))
    domain = domain_of(shape)
    p = random_histogram(domain.size, rng)
    sets = [
        s for w in range(1, min(4, domain.d) + 1) for s in itertools.permutations(domain.names, w)
    ]
    if len(sets) > 400:  # d = 12: a fixed random sample of the 13,000 ordered sets
        sets = [sets[i] for i in rng.choice(len(sets), 400, replace=False)]
    Q = MarginalWorkload(domain, sets)
    for m, names in enumerate(sets):
        table = Q.table(p, m)
        assert table.shape == Q.marginal_shape(m)
        np.testing.assert_allclose(table, reference_table(p, shape, domain.axes(names)), rtol=1e-12)
        assert not np.shares_memory(table, p)


def test_table_of_every_attribute_is_a_copy_of_the_histogram():
    domain = domain_of((3, 4, 2))
    p = random_histogram(domain.size, np.random.default_rng(0))
    Q = MarginalWorkload(domain, [("a2", "a0", "a1"), ("a0", "a1", "a2")])
    np.testing.assert_array_equal(Q.table(p, 1).ravel(), p)
    np.testing.assert_array_equal(Q.table(p, 0), p.reshape(3, 4, 2).transpose(2, 0, 1))
    assert not np.shares_memory(Q.table(p, 1), p)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(1, 5), min_size=1, max_size=7),
    st.data(),
)
def test_table_property(sizes, data):
    domain = domain_of(sizes)
    axes = data.draw(
        st.permutations(range(domain.d)).map(lambda a: a[: data.draw(st.integers(0, domain.d))])
    )
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    p = random_histogram(domain.size, rng, zeros=0.3)
    table = queries._marginal(p, domain.shape, tuple(axes))
    np.testing.assert_allclose(
        table, reference_table(p, domain.shape, tuple(axes)), rtol=1e-12, atol=1e-300
    )
    assert table.sum() == pytest.approx(1.0)


# --- all tables at once, sharing work ------------------------------------------------------


def test_all_three_way_marginals_share_a_few_cached_tables():
    domain = dp.Domain.binary(12)
    Q = MarginalWorkload.all_kway(domain, 3)
    plan = Q._sharing_plan()
    assert plan is not None
    assert sum(source < 0 for source, _, _ in plan.tables) < 12  # few passes over p ...
    assert all(source >= 0 for source, _, _ in plan.marginals)  # ... every marginal from a cache
    p = random_histogram(domain.size, np.random.default_rng(1))
    direct = np.concatenate([Q.table(p, m).ravel() for m in range(len(Q.marginals))])
    np.testing.assert_allclose(Q._answer(p), direct, rtol=1e-12)
    np.testing.assert_allclose(Q.answer(p), direct, rtol=1e-12)


def test_no_sharing_when_it_cannot_help():
    domain = domain_of((3, 4, 5))
    assert MarginalWorkload(domain, [("a0", "a2")])._sharing_plan() is None
    big = MarginalWorkload(dp.Domain.binary(10), [tuple(f"x{i}" for i in range(9)), ("x9",)])
    assert big._sharing_plan() is None


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=7), st.data())
def test_shared_tables_equal_the_direct_ones_for_any_mix(sizes, data):
    """With the per-call cost set to 0 the plan shares even on tiny domains: every plan is
    exercised, for mixes of marginal sizes and orders."""
    domain = domain_of(sizes)
    names = st.permutations(domain.names).flatmap(
        lambda perm: st.integers(0, domain.d).map(lambda w: tuple(perm[:w]))
    )
    sets = data.draw(st.lists(names, min_size=1, max_size=12))
    p = random_histogram(domain.size, np.random.default_rng(data.draw(st.integers(0, 99))), 0.3)
    old = queries._CALL_COST
    try:
        queries._CALL_COST = data.draw(st.sampled_from([0, 4]))
        Q = MarginalWorkload(domain, sets)
        tables = Q._tables(p)
    finally:
        queries._CALL_COST = old
    for m, names_m in enumerate(sets):
        expected = reference_table(p, domain.shape, domain.axes(names_m))
        np.testing.assert_allclose(tables[m], expected, rtol=1e-12, atol=1e-300)


# --- the multiplicative-weights step without a dense query --------------------------------


def negation_closed(shape, way):
    return MarginalWorkload.all_kway(domain_of(shape), way).with_negations()


@pytest.mark.parametrize(
    "shape, way", [((2,) * 11, 3), ((3, 5, 1, 7, 2, 4, 3), 2), ((5,), 1), ((1000, 3), 2)]
)
def test_cell_update_equals_the_dense_mw_update(shape, way):
    closed = negation_closed(shape, way)
    rng = np.random.default_rng(7)
    for _ in range(25):
        p = random_histogram(closed.domain_size, rng, zeros=0.2)
        i = int(rng.integers(closed.k))  # a cell or a negated cell
        eta = float(rng.choice([-1, 1]) * rng.exponential(2.0))
        expected = mw.mw_update(p, closed._query(i), eta)
        mine = p.copy()
        out = closed._reweight(mine, i, eta)
        assert out is mine  # in place, on the caller's copy
        np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-300)


def test_subset_and_matrix_workloads_update_like_the_dense_rule():
    base = MarginalWorkload.all_kway(domain_of((3, 4, 2)), 2)
    rng = np.random.default_rng(3)
    p = random_histogram(base.domain_size, rng)
    subset = base.subset([5, 0, 17])
    matrix = dp.MatrixWorkload(base.matrix())
    for i, eta in [(0, 0.3), (2, -1.5), (1, 4.0)]:
        expected = mw.mw_update(p, subset._query(i), eta)
        np.testing.assert_allclose(subset._reweight(p.copy(), i, eta), expected, rtol=1e-10)
    for i in (0, 9, 25):
        expected = mw.mw_update(p, base._query(i), 0.7)
        np.testing.assert_allclose(matrix._reweight(p, i, 0.7), expected)
        np.testing.assert_allclose(matrix.with_negations()._reweight(p, i + base.k, -0.7), expected)


def test_whole_table_factor_equals_the_broadcast_product():
    Q = MarginalWorkload(domain_of((3, 2, 4, 2, 5, 2, 2, 3)), [("a6", "a1", "a4"), ("a7",)])
    rng = np.random.default_rng(11)
    for m in range(2):
        p = random_histogram(Q.domain_size, rng, zeros=0.1)
        log_factor = rng.normal(size=Q.marginal_shape(m)) * 20
        dense = np.broadcast_to(Q.broadcast_table(m, log_factor), Q.domain.shape).ravel()
        expected = mw.mw_update(p, -dense, 1.0)
        np.testing.assert_allclose(
            Q.reweight(p.copy(), m, log_factor), expected, rtol=1e-10, atol=1e-300
        )
        given_table = Q.reweight(p.copy(), m, log_factor, table=Q.table(p, m))
        np.testing.assert_allclose(given_table, expected, rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("scale", [1e3, 1e6, 1e300, 1e308])
def test_reweight_is_stable_at_huge_log_factors(scale):
    Q = MarginalWorkload.all_kway(dp.Domain.binary(12), 3)
    p = random_histogram(Q.domain_size, np.random.default_rng(0), zeros=0.2)
    log_factor = scale * np.array([[[1.0, -1.0], [0.5, -0.5]], [[0.25, 0.0], [-0.25, 1.0]]])
    out = Q.reweight(p.copy(), 0, log_factor)
    assert np.all(np.isfinite(out)) and np.all(out >= 0)
    assert out.sum() == pytest.approx(1.0, abs=1e-12)
    table = Q.table(out, 0)
    # two cells share the largest factor: all mass goes there, in the ratio they had before
    top = Q.table(p, 0)[[0, 1], [0, 1], [0, 1]]
    np.testing.assert_allclose(table[[0, 1], [0, 1], [0, 1]], top / top.sum(), rtol=1e-9)


def test_reweight_moves_mass_to_a_subnormal_cell_without_overflow():
    Q = MarginalWorkload(dp.Domain.binary(4), [("x0",)])
    p = np.zeros(16)
    p[:8] = (1 - 1e-320) / 8
    p[15] = 1e-320  # the only record with x0 = 1: a sub-normal mass
    out = Q.reweight(p.copy(), 0, np.array([-1000.0, 800.0]))
    assert np.all(np.isfinite(out))
    assert out[15] == pytest.approx(1.0, rel=1e-6) and out.sum() == pytest.approx(1.0, rel=1e-6)
    assert np.all(out[:8] == 0)  # e^-1800 relative weight: genuinely negligible


def test_cells_of_zero_mass_stay_empty():
    Q = MarginalWorkload(dp.Domain.binary(3), [("x2",)])
    p = np.array([0.5, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0])  # no record with x2 = 1
    out = Q.reweight(p.copy(), 0, np.array([0.0, 1e6]))
    np.testing.assert_array_equal(out, p)


def test_reweight_refuses_bad_input_clearly():
    Q = MarginalWorkload(domain_of((3, 4)), [("a1", "a0")])
    p = np.full(12, 1 / 12)
    with pytest.raises(ValueError, match=r"log_factor must have marginal 0's shape \(4, 3\)"):
        Q.reweight(p.copy(), 0, np.zeros((3, 4)))
    with pytest.raises(ValueError, match="log_factor must contain only finite"):
        Q.reweight(p.copy(), 0, np.full((4, 3), np.nan))
    with pytest.raises(TypeError, match="log_factor"):
        Q.reweight(p.copy(), 0, "zeros")
    with pytest.raises(ValueError, match="table must have"):
        Q.reweight(p.copy(), 0, np.zeros((4, 3)), table=np.ones(12))
    with pytest.raises(ValueError, match="marginal index m"):
        Q.reweight(p.copy(), 1, np.zeros((4, 3)))
    for bad in (
        p.astype(np.float32),
        p[::-1][::-1].reshape(3, 4),
        np.full(24, 1 / 24)[::2],
        list(p),
    ):
        with pytest.raises(TypeError, match="p must be a writeable contiguous float64"):
            Q.reweight(bad, 0, np.zeros((4, 3)))
    np.testing.assert_array_equal(p, np.full(12, 1 / 12))  # refusals changed nothing


# --- the learners use the structured update -------------------------------------------------


@pytest.mark.parametrize("adversary", ["worst", "smallest", "random"])
def test_learn_with_marginals_equals_learn_with_the_dense_matrix(adversary):
    """Non-binary attributes: no cell is another's negation, so no exact ties in the gaps."""
    domain = domain_of((3, 4, 3, 5))
    data = dp.correlated_data(domain, 400, rng=2)
    marginals = MarginalWorkload.all_kway(domain, 2)
    dense = dp.MatrixWorkload(marginals.matrix(), domain=domain)
    fast = mw.learn(data.histogram(), marginals, alpha=0.03, adversary=adversary, rng=1)
    slow = mw.learn(data.histogram(), dense, alpha=0.03, adversary=adversary, rng=1)
    assert [r.query for r in fast.trace] == [r.query for r in slow.trace]
    np.testing.assert_allclose(fast.synthetic, slow.synthetic, rtol=1e-9)
    np.testing.assert_allclose(fast.column("potential"), slow.column("potential"), rtol=1e-9)


def test_private_mw_with_marginals_equals_private_mw_with_the_dense_matrix():
    domain = domain_of((3, 4, 3, 5))
    skewed = random_histogram(domain.size, np.random.default_rng(3), zeros=0.9)
    data = dp.from_histogram(skewed, domain, 1_000_000, rng=3)
    marginals = MarginalWorkload.all_kway(domain, 2)
    dense = dp.MatrixWorkload(marginals.matrix(), domain=domain)
    fast = mw.private_mw(data, marginals, epsilon=1.0, alpha=0.1, rng=4, snapshots=[0, 2])
    slow = mw.private_mw(data, dense, epsilon=1.0, alpha=0.1, rng=4, snapshots=[0, 2])
    assert sum(r.updated for r in fast.trace) >= 2  # the run does update
    assert [r.query for r in fast.trace] == [r.query for r in slow.trace]
    np.testing.assert_allclose(fast.synthetic, slow.synthetic, rtol=1e-9)
    np.testing.assert_allclose(fast.snapshots[2], slow.snapshots[2], rtol=1e-9)
    assert not np.shares_memory(fast.snapshots[0], fast.synthetic)


@pytest.mark.parametrize(
    "snapshots, error, match",
    [
        ("12", TypeError, "snapshots must be an iterable of non-negative integers"),
        (b"12", TypeError, "snapshots must be"),
        (None, TypeError, "snapshots must be"),
        (3, TypeError, "snapshots must be"),
        ([1, 2.0], TypeError, "each entry of snapshots must be an integer"),
        ([0, -1], ValueError, "each entry of snapshots must be >= 0"),
        ([True], TypeError, "each entry of snapshots"),
    ],
)
def test_snapshots_are_validated_before_anything_runs(snapshots, error, match):
    domain = dp.Domain.binary(3)
    data = dp.correlated_data(domain, 100, rng=0)
    Q = MarginalWorkload.all_kway(domain, 1)
    with pytest.raises(error, match=match):
        mw.learn(data.histogram(), Q, alpha=0.1, snapshots=snapshots)
    budget = dp.PrivacyBudget(1.0)
    with pytest.raises(error, match=match):
        mw.private_mw(data, Q, epsilon=1.0, alpha=0.1, rng=0, budget=budget, snapshots=snapshots)
    assert budget.spent_epsilon == 0.0 and budget.spent_delta == 0.0


def test_snapshots_accept_any_iterable_of_rounds():
    domain = dp.Domain.binary(3)
    data = dp.correlated_data(domain, 100, rng=0)
    Q = MarginalWorkload.all_kway(domain, 2)
    run = mw.learn(data.histogram(), Q, alpha=0.02, snapshots=(t for t in [0, 2, np.int64(3)]))
    assert sorted(run.snapshots) == [0, 2, 3]
    assert run.snapshots[0].sum() == pytest.approx(1.0)


@pytest.mark.parametrize("shape", [(3, 5, 1, 7, 2, 4, 3), (2,) * 12, (4, 1, 1, 2)])
def test_small_universe_path_equals_the_staged_one(shape, monkeypatch):
    # universes of at most SMALL_DOMAIN cells index every x's cell (bincount, gather); the
    # results must match the staged reduction and broadcast multiply, zero-mass cells included
    assert math.prod(shape) <= queries.SMALL_DOMAIN
    rng = np.random.default_rng(11)
    domain = domain_of(shape)
    sets = [c for way in (1, 2, 3) for c in itertools.combinations(domain.names, way)][:12]
    p = random_histogram(domain.size, rng, zeros=0.3)
    factors = [rng.normal(scale=30.0, size=[domain.shape[domain.names.index(a)] for a in c])
               for c in sets]  # fmt: skip
    results = []
    for limit in (queries.SMALL_DOMAIN, 0):
        monkeypatch.setattr(queries, "SMALL_DOMAIN", limit)
        Q = MarginalWorkload(domain, sets)
        assert (Q._cell_index(0) is None) == (limit == 0)
        tables = [Q.table(p, m) for m in range(len(sets))]
        q = p.copy()
        for m, factor in enumerate(factors):
            q = Q.reweight(q, m, factor)
        results.append((tables, q))
    (small_tables, small_p), (staged_tables, staged_p) = results
    for a, b in zip(small_tables, staged_tables):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(small_p, staged_p, rtol=1e-9, atol=1e-300)
    assert np.all(small_p[p == 0] == 0) and small_p.sum() == pytest.approx(1.0)


def test_reweight_takes_a_table_given_as_a_list_and_refuses_a_bad_one():
    dom = domain_of((2, 3))
    Q = MarginalWorkload(dom, [("a1",)])
    p = random_histogram(dom.size, np.random.default_rng(2))
    expected = Q.reweight(p.copy(), 0, [0.3, -0.2, 1.0])
    given = Q.reweight(p.copy(), 0, [0.3, -0.2, 1.0], table=Q.table(p, 0).tolist())
    np.testing.assert_allclose(given, expected, rtol=1e-14)
    with pytest.raises(TypeError, match="table must be numeric"):
        Q.reweight(p.copy(), 0, [0.3, -0.2, 1.0], table="abc")
    with pytest.raises(ValueError, match=r"table must have marginal 0's shape \(3,\)"):
        Q.reweight(p.copy(), 0, [0.3, -0.2, 1.0], table=[[0.2, 0.3, 0.5]])
