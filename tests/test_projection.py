"""The projection mechanism (Algorithm 1), the projection onto K_Q and the Gaussian width."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpteach as dp
from dpteach import projection, theory

DOM = dp.Domain({"a": 2, "b": 3, "c": 4})
DATA = dp.correlated_data(DOM, 60, rng=0)
MARGINALS = dp.MarginalWorkload.all_kway(DOM, 2)
RANDOM = dp.random_queries(64, 400, rng=1)
RANDOM_DATA = dp.correlated_data(dp.Domain.binary(6), 40, rng=2)

WORKLOADS = {
    "dense": dp.random_queries(DOM.size, 12, rng=3),
    "marginals": MARGINALS,
    "negated": MARGINALS.with_negations(),
    "subset": MARGINALS.subset([5, 0, 0, 17]),
}


@pytest.mark.parametrize("name", WORKLOADS)
def test_adjoint_is_the_transpose(name):
    w = WORKLOADS[name]
    v = np.random.default_rng(0).normal(size=(3, w.k))
    assert np.allclose(projection.adjoint(w, v), v @ w.matrix())
    assert np.allclose(projection.adjoint(w, v[0]), w.matrix().T @ v[0])


def test_radius_and_support_function():
    for w in (WORKLOADS["dense"], MARGINALS):
        assert projection.radius(w) == pytest.approx(np.sqrt((w.matrix() ** 2).sum(0).max()))
    y = np.random.default_rng(1).normal(size=MARGINALS.k)
    assert projection.support_function(MARGINALS, y) == pytest.approx(
        np.max(MARGINALS.matrix().T @ y)
    )


def test_simplex_projection_is_exact():
    rng = np.random.default_rng(2)
    for _ in range(20):
        v = rng.normal(size=7) * 3
        p = projection.simplex_projection(v)
        assert p.min() >= 0 and p.sum() == pytest.approx(1)
        # optimality: v - p is constant on the support and no larger off it
        d = v - p
        assert np.allclose(d[p > 0], d[p > 0][0])
        assert np.all(d[p == 0] <= d[p > 0][0] + 1e-12)


@pytest.mark.parametrize("name", ["dense", "marginals", "negated"])
def test_projection_is_in_K_optimal_and_never_hurts(name):
    w = WORKLOADS[name]
    true = w.answer(DATA.histogram())
    matrix = w.matrix()
    for seed in range(15):
        noisy = true + np.random.default_rng(seed).normal(0, 0.3, w.k)
        proj = projection.project(noisy, w, tol=1e-7)
        # the certificate histogram is a distribution and reproduces the point: y_hat in K_Q
        assert proj.histogram.min() >= 0 and proj.histogram.sum() == pytest.approx(1)
        assert np.allclose(matrix @ proj.histogram, proj.point)
        # optimality: <y - y_hat, Q(r) - y_hat> <= gap for every vertex Q(r), and gap is tiny
        slack = (noisy - proj.point) @ (matrix - proj.point[:, None])
        assert slack.max() <= proj.gap + 1e-12
        assert proj.gap <= 1e-14 * w.k / 2 + 1e-12
        # projection never hurts (the true answer is in K_Q)
        assert np.linalg.norm(proj.point - true) <= np.linalg.norm(noisy - true) + 1e-9


def test_projection_is_idempotent_on_K():
    rng = np.random.default_rng(4)
    for _ in range(10):
        inside = MARGINALS.answer(rng.dirichlet(np.ones(DOM.size)))
        proj = projection.project(inside, MARGINALS, tol=1e-8)
        assert np.linalg.norm(proj.point - inside) <= proj.distance_bound + 1e-9
        assert np.linalg.norm(proj.point - inside) < 1e-6


def test_vertices_of_a_marginal_workload_project_to_themselves():
    vertex = MARGINALS.answer(np.eye(DOM.size)[5])
    proj = projection.project(vertex, MARGINALS, tol=1e-9)
    assert np.allclose(proj.point, vertex, atol=1e-6)


def test_marginal_workloads_are_never_dense(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a marginal workload was materialised as a dense matrix")

    monkeypatch.setattr(dp.MarginalWorkload, "matrix", refuse)
    monkeypatch.setattr(dp.MarginalWorkload, "query", refuse)
    result = projection.projection_mechanism(DATA, MARGINALS, epsilon=1.0, delta=1e-5, rng=0)
    assert result.info["gap"] >= 0
    projection.gaussian_width(MARGINALS, samples=50, rng=0)


def test_mechanism_result_and_calibration():
    budget = dp.PrivacyBudget(1.0, 1e-5)
    r = projection.projection_mechanism(DATA, MARGINALS, epsilon=1.0, delta=1e-5, rng=0,
                                        budget=budget)  # fmt: skip
    sigma = dp.gaussian_sigma(math.sqrt(MARGINALS.k) / DATA.n, 1.0, 1e-5)
    assert r.info["sigma"] == sigma
    assert budget.spent_epsilon == 1.0 and budget.spent_delta == 1e-5
    assert np.allclose(r.answers, MARGINALS.answer(r.synthetic))
    same = projection.projection_mechanism(DATA, MARGINALS, epsilon=1.0, delta=1e-5, rng=0)
    assert np.array_equal(same.answers, r.answers)
    # the noise is the Gaussian mechanism's: same seed, same noisy answers
    noisy = dp.gaussian(MARGINALS.answer(DATA.histogram()), sensitivity=math.sqrt(MARGINALS.k)
                        / DATA.n, epsilon=1.0, delta=1e-5, rng=0)  # fmt: skip
    assert np.array_equal(r.info["noisy"], noisy)


def test_average_error_within_theorem_9():
    """Mean over 40 runs of ||y_hat - Q(x)||^2 / m against Theorem 9's bound on its expectation
    (the bound uses the Gaussian-width upper bound, so it holds with room to spare)."""
    w = RANDOM
    true = w.answer(RANDOM_DATA.histogram())
    errors = [
        np.mean((projection.projection_mechanism(RANDOM_DATA, w, epsilon=1.0, delta=1e-5,
                                                 rng=s).answers - true) ** 2)
        for s in range(40)
    ]  # fmt: skip
    width = theory.gaussian_width_bound(w.k, w.domain_size)
    bound = theory.projection_average_error(width, w.k, RANDOM_DATA.n, 1.0, 1e-5)
    no_projection = theory.gaussian_average_error(w.k, RANDOM_DATA.n, 1.0, 1e-5)
    assert math.sqrt(np.mean(errors)) <= bound < no_projection


def test_theorem_9_proof_holds_on_every_run():
    """The proof's deterministic step: ||y_hat - y||^2 <= <W, y_hat - y> <= h_K(W) + h_K(-W)
    on every run. The first step is <y_tilde - y_hat, y - y_hat> <= 0, which for the solver's
    answer holds up to its certified duality gap (y is in K_Q). Without projection the same
    bound, ||y_tilde - y||^2 <= h_K(W) + h_K(-W), fails on some runs."""
    w = RANDOM
    true = w.answer(RANDOM_DATA.histogram())
    outside = 0
    for seed in range(20):
        r = projection.projection_mechanism(RANDOM_DATA, w, epsilon=1.0, delta=1e-5, rng=seed)
        noise, error = r.info["noisy"] - true, r.answers - true
        assert error @ error <= noise @ error + r.info["gap"] + 1e-12
        widths = projection.support_function(w, np.stack([noise, -noise]))
        assert noise @ error <= widths.sum() + 1e-12
        outside += noise @ noise > widths.sum()  # the bound fails without projection
    assert outside > 0


# --- Gaussian width -------------------------------------------------------------------------------


def test_width_estimates_lie_below_the_bounds_and_match_each_other():
    for w in (RANDOM, MARGINALS, dp.random_queries(256, 200, rng=5)):
        est = projection.gaussian_width(w, samples=2000, rng=6)
        clean = theory.gaussian_width_bound(w.k, w.domain_size)
        assert est.gaussian_interval[1] <= clean
        assert est.gaussian_width <= projection.radius(w) * math.sqrt(2 * math.log(w.domain_size))
        assert est.gaussian_width <= theory.gaussian_width_bound_lecture(w.k, w.domain_size)
        # l* = E||g|| M*: the two estimates' intervals overlap once M* is scaled
        lo, hi = est.gaussian_interval
        assert est.expected_norm * est.mean_interval[0] <= hi
        assert est.expected_norm * est.mean_interval[1] >= lo


def test_width_interval_covers_a_known_width():
    """K = the simplex's vertices e_1..e_m (the identity workload): l* = E max_i g_i, known by
    numerical integration; the 95% intervals of 40 seeds cover it at least 34 times (P < 0.01 of
    fewer under 95% coverage; the interval is conservative, so in practice all do)."""
    from scipy import integrate, stats

    m = 8
    exact = integrate.quad(lambda x: x * m * stats.norm.pdf(x) * stats.norm.cdf(x) ** (m - 1),
                           -np.inf, np.inf)[0]  # fmt: skip
    identity = dp.MatrixWorkload(np.eye(m))
    covered = 0
    for s in range(40):
        lo, hi = projection.gaussian_width(identity, samples=500, rng=s).gaussian_interval
        covered += lo <= exact <= hi
    assert covered >= 34
    # a wrong width (exact + 0.3) is not covered by most intervals
    wrong = sum(
        lo <= exact + 0.3 <= hi
        for lo, hi in (projection.gaussian_width(identity, samples=500, rng=s).gaussian_interval
                       for s in range(10))
    )  # fmt: skip
    assert wrong <= 2


def test_expected_gaussian_norm():
    g = np.random.default_rng(0).standard_normal((200_000, 5))
    assert projection.expected_gaussian_norm(5) == pytest.approx(
        np.linalg.norm(g, axis=1).mean(), rel=3e-3
    )
    for m in (1, 2, 10, 1000):
        assert m / math.sqrt(m + 1) <= projection.expected_gaussian_norm(m) <= math.sqrt(m)


# --- bad input: clear errors, nothing charged -----------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "epsilon must be > 0"),
        ({"delta": 0.0}, ValueError, "delta must be in"),
        ({"delta": 1.0}, ValueError, "delta must be in"),
        ({"tol": -1.0}, ValueError, "tol must be > 0"),
        ({"max_iter": 0}, ValueError, "max_iter must be >= 1"),
        ({"calibration": "magic"}, ValueError, "calibration must be"),
        ({"epsilon": 2.0, "calibration": "classic"}, ValueError, "epsilon must be < 1"),
        ({"rng": None}, TypeError, "rng must be"),
    ],
)
def test_bad_input_charges_nothing(kwargs, error, match):
    budget = dp.PrivacyBudget(10.0, 0.5)
    args = {"epsilon": 1.0, "delta": 1e-5, "rng": 0} | kwargs
    with pytest.raises(error, match=match):
        projection.projection_mechanism(DATA, MARGINALS, budget=budget, **args)
    assert budget.ledger == []


def test_mismatched_shapes_and_domains():
    budget = dp.PrivacyBudget(10.0, 0.5)
    other = dp.MarginalWorkload.all_kway(dp.Domain({"x": 4, "y": 6}), 1)  # also 24 cells
    with pytest.raises(ValueError, match="different universes"):
        projection.projection_mechanism(DATA, other, epsilon=1.0, delta=1e-5, rng=0, budget=budget)
    with pytest.raises(ValueError, match="different universes"):
        projection.projection_mechanism(DATA, RANDOM, epsilon=1.0, delta=1e-5, rng=0, budget=budget)
    assert budget.ledger == []
    with pytest.raises(ValueError, match="y must have length m=26"):
        projection.project(np.zeros(5), MARGINALS)
    with pytest.raises(ValueError, match="finite"):
        projection.project(np.full(MARGINALS.k, np.nan), MARGINALS)
    with pytest.raises(ValueError, match=r"v must have shape \(m,\) or \(N, m\)"):
        projection.adjoint(MARGINALS, np.zeros((2, 3)))
    with pytest.raises(TypeError, match="workload must be a dpteach Workload"):
        projection.gaussian_width(np.eye(3), rng=0)
    with pytest.raises(ValueError, match="samples must be >= 2"):
        projection.gaussian_width(MARGINALS, samples=1, rng=0)
    with pytest.raises(ValueError, match="m must be >= 1"):
        projection.expected_gaussian_norm(0)


def test_universe_too_large_is_refused_before_allocating():
    huge = dp.MarginalWorkload.all_kway(dp.Domain.binary(30), 1)
    with pytest.raises(ValueError, match="more than the dense limit"):
        projection.project(np.zeros(huge.k), huge)
    with pytest.raises(ValueError, match="more than the dense limit"):
        projection.gaussian_width(huge, rng=0)


# --- the constants of Theorems 5 and 9 ----------------------------------------------------------


def test_theorem9_constants():
    """c_1 = 2 eps sigma / sqrt(ln(1/delta)); the classic calibration gives
    2 sqrt(2 ln(1.25/delta) / ln(1/delta)), which tends to 2 sqrt(2); the analytic one is
    smaller."""
    for delta in (1e-3, 1e-6, 1e-12):
        classic = theory.theorem9_c1(0.5, delta, calibration="classic")
        assert classic == pytest.approx(
            2 * math.sqrt(2 * math.log(1.25 / delta) / math.log(1 / delta))
        )
        assert theory.theorem9_c1(0.5, delta) < classic
    assert theory.theorem9_c1(0.5, 1e-300, calibration="classic") == pytest.approx(
        2 * math.sqrt(2), rel=1e-3
    )
    # Theorem 5 is Theorem 9 at the width bound sqrt(2 m ln|X|), for every m
    for m in (1, 10, 1000):
        width = theory.gaussian_width_bound(m, 256)
        assert theory.projection_sample_size(width, m, 0.1, 1.0, 1e-6) == pytest.approx(
            theory.projection_sample_size_simple(256, 0.1, 1.0, 1e-6)
        )
    # and the sample size inverts the error bound
    n = math.ceil(theory.projection_sample_size(30.0, 100, 0.05, 1.0, 1e-6))
    assert theory.projection_average_error(30.0, 100, n, 1.0, 1e-6) <= 0.05


def test_project_polishes_each_support_once(monkeypatch):
    # the polish is a function of (workload, y, support): project computes it once per support
    # and reuses it (with its gap) whenever the iterations come back to that support
    calls = []
    original = projection._polish

    def counting(workload, y, support):
        calls.append(support.tobytes())
        return original(workload, y, support)

    monkeypatch.setattr(projection, "_polish", counting)
    dom8 = dp.Domain.binary(8)
    Q = dp.random_queries(dom8.size, 100, rng=100)
    y = Q.answer(dp.correlated_data(dom8, 3000, rng=1).histogram())
    y = y + np.random.default_rng(1).normal(scale=0.02, size=y.size)
    result = projection.project(y, Q)
    # (without reuse this case polishes 120 times, 19 distinct supports)
    assert len(calls) >= 10 and len(calls) == len(set(calls))
    assert result.gap <= 1e-5**2 * Q.k / 2  # still certified to the default tolerance


def test_project_estimates_a_workloads_lipschitz_constant_once(monkeypatch):
    calls = []
    original = projection._operator_norm_squared

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(projection, "_operator_norm_squared", counting)
    Q = dp.MatrixWorkload(np.random.default_rng(4).random((2, 7)))
    y = np.array([0.9, -0.2])
    first = projection.project(y, Q)
    again = projection.project(y, Q)
    assert len(calls) == 1  # the estimate depends on the workload alone
    projection._LIPSCHITZ.clear()
    fresh = projection.project(y, Q)
    assert len(calls) == 2
    for other in (again, fresh):  # reuse changes nothing
        np.testing.assert_array_equal(other.histogram, first.histogram)
        assert other.iterations == first.iterations and other.gap == first.gap
    other_workload = dp.MatrixWorkload(np.random.default_rng(5).random((2, 7)))
    projection.project(y, other_workload)
    assert len(calls) == 3


def test_project_works_for_a_workload_that_cannot_be_cached():
    class Unhashable(dp.MatrixWorkload):  # __eq__ without __hash__: not a dictionary key
        def __eq__(self, other):
            return self is other

        __hash__ = None

    Q = Unhashable(np.random.default_rng(4).random((2, 7)))
    plain = dp.MatrixWorkload(np.random.default_rng(4).random((2, 7)))
    y = np.array([0.9, -0.2])
    np.testing.assert_array_equal(
        projection.project(y, Q).point, projection.project(y, plain).point
    )
