# ruff: noqa: E501  (a table of one-line cases reads best unwrapped)
"""Unusual but plausible calls, as a new reader would make them: each returns a correct result or
raises a clear ValueError/TypeError/BudgetExceededError naming the parameter.

``CASES`` rows are ``(name, call, expected)``: ``expected`` is an exception class with a regular
expression its message must match, or a predicate on the returned value. Calls marked ``HEAVY``
allocated huge arrays or ran for minutes before the hardening (they must now refuse at once).
Separate tests check that refusals charge nothing, draw nothing and mutate nothing, and that the
same seed gives the same result.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpteach as dp
from dpteach import (
    audit,
    baselines,
    erm,
    iterative,
    median,
    mw,
    privacy,
    projection,
    results,
    theory,
)

DOM = dp.Domain({"a": 2, "b": 3})
OTHER = dp.Domain({"c": 3, "d": 2})  # same size, a different universe
DATA = dp.Dataset([[0, 1], [1, 2], [1, 0], [0, 0]], DOM)
DATA_OTHER = dp.Dataset([[0, 1], [2, 0]], OTHER)
P = DATA.histogram()
Q = dp.MarginalWorkload.all_kway(DOM, 1)
Q_OTHER = dp.MarginalWorkload.all_kway(OTHER, 1)
ONE = dp.Domain({"only": 1})
ERM_X, ERM_Y = np.array([[0.6, 0.8], [1.0, 0.0]]), np.array([1.0, -1.0])


def raises(error, match):
    return (error, match)


def ok(predicate=lambda r: True):
    return predicate


def finite(r):
    return bool(np.all(np.isfinite(r)))


def lap(value=0.5, **kw):
    return dp.laplace(value, **({"sensitivity": 1.0, "epsilon": 1.0, "rng": 0} | kw))


def gauss(value=0.5, **kw):
    return dp.gaussian(
        value, **({"sensitivity": 1.0, "epsilon": 1.0, "delta": 1e-5, "rng": 0} | kw)
    )


def expo(scores=(0.0, 1.0), **kw):
    return dp.exponential(scores, **({"sensitivity": 1.0, "epsilon": 1.0, "rng": 0} | kw))


def sparse(**kw):
    return dp.Sparse(0.5, **({"sensitivity": 0.1, "epsilon": 1.0, "rng": 0} | kw))


def nan_sampler(x, rng, size):
    return np.full(size, np.nan)


def short_sampler(x, rng, size):
    return np.zeros(size // 2)


def matrix_sampler(x, rng, size):
    return np.zeros((size, 2))


def run_mwem(data=DATA, workload=Q, **kw):
    return mw.mwem(data, workload, **({"epsilon": 1.0, "rounds": 2, "rng": 0} | kw))


def run_pmw(data=DATA, workload=Q, **kw):
    return mw.private_mw(data, workload, **({"epsilon": 1.0, "alpha": 0.4, "rng": 0} | kw))


def run_ic(data=DATA, workload=Q, **kw):
    dua = iterative.MultiplicativeWeightsDUA(6, alpha=0.2)  # level alpha/2 of the IC run
    return iterative.iterative_construction(
        data, workload, dua, **({"alpha": 0.4, "epsilon": 1.0, "rng": 0} | kw)
    )


HEAVY = {
    "all_kway of 30 of 60 attributes",
    "small_databases 2000 cells, m=2",
    "expected max error k=1e9",
    "sample 1e12 records",
    "independent_data, an attribute of 1e9 values",
    "independent_data n=1e12",
    "correlated_data, an attribute of 2^40 values",
    "Domain.binary(1e9)",
}

CASES = [
    # --- Domain -------------------------------------------------------------------------------
    ("Domain from a bare string", lambda: dp.Domain("ab"), raises(TypeError, "attributes")),
    ("Domain(None)", lambda: dp.Domain(None), raises(TypeError, "attributes")),
    ("Domain numpy sizes", lambda: dp.Domain({"a": 2, "b": np.int64(3)}).size, ok(lambda r: r == 6)),
    ("Domain bool size", lambda: dp.Domain({"a": True}), raises(TypeError, "size of attribute 'a'")),
    ("Domain empty name", lambda: dp.Domain({"": 2}), raises(TypeError, "name")),
    ("Domain int name", lambda: dp.Domain({1: 2}), raises(TypeError, "name")),
    ("Domain huge exact size", lambda: dp.Domain({"a": 2**40, "b": 2**40}).size, ok(lambda r: r == 2**80)),
    ("Domain equal by attributes", lambda: dp.Domain({"a": 2, "b": 3}) == DOM, ok(lambda r: r is True)),
    ("Domain same size differs", lambda: OTHER == DOM, ok(lambda r: r is False)),
    ("Domain order matters", lambda: dp.Domain({"b": 3, "a": 2}) == DOM, ok(lambda r: r is False)),
    ("Domain pairs of wrong length", lambda: dp.Domain([("a", 2, 3)]), raises(TypeError, "attributes")),
    ("Domain.binary(0)", lambda: dp.Domain.binary(0), raises(ValueError, "d must be")),
    ("Domain.binary(2.0)", lambda: dp.Domain.binary(2.0), raises(TypeError, "d must be")),
    ("Domain.binary(True)", lambda: dp.Domain.binary(True), raises(TypeError, "d must be")),
    ("Domain.binary(20000) is linear", lambda: dp.Domain.binary(20_000).d, ok(lambda r: r == 20_000)),
    ("Domain.binary(1e9)", lambda: dp.Domain.binary(10**9), raises(ValueError, "limit")),
    ("Domain.project bare string", lambda: DOM.project("ab"), raises(TypeError, "string")),
    ("Domain.ravel float record", lambda: DOM.ravel(np.array([[0, 1.5]])), raises(TypeError, "integer")),
    ("Domain.ravel 1-D record", lambda: DOM.ravel([0, 1]), raises(ValueError, r"shape \(n, 2\)")),
    ("Domain.unravel bools", lambda: DOM.unravel([True]), raises(TypeError, "indices")),
    ("Domain.unravel empty", lambda: DOM.unravel(np.array([], dtype=int)).shape, ok(lambda r: r == (0, 2))),
    ("Domain.unravel out of range", lambda: DOM.unravel([6]), raises(ValueError, "indices")),
    ("Domain getitem unknown", lambda: DOM["z"], raises(ValueError, "unknown attribute 'z'")),
    # --- Dataset ------------------------------------------------------------------------------
    ("Dataset(None)", lambda: dp.Dataset(None, DOM), raises((TypeError, ValueError), "records")),
    ("Dataset domain None", lambda: dp.Dataset([[0, 1]], None), raises(TypeError, "domain")),
    ("Dataset domain dict", lambda: dp.Dataset([[0, 1]], {"a": 2, "b": 3}), raises(TypeError, "domain")),
    ("Dataset from a string", lambda: dp.Dataset("ab", DOM), raises((TypeError, ValueError), "records")),
    ("Dataset bool records", lambda: dp.Dataset(np.array([[True, False]]), DOM).histogram()[3], ok(lambda r: r == 1.0)),
    ("Dataset integral floats", lambda: dp.Dataset([[0, 1.0]], DOM).n, ok(lambda r: r == 1)),
    ("Dataset nan record", lambda: dp.Dataset([[0, np.nan]], DOM), raises(TypeError, "integer")),
    ("Dataset huge float record", lambda: dp.Dataset([[0, 1e20]], DOM), raises(ValueError, "attribute 'b'")),
    ("Dataset 3-D records", lambda: dp.Dataset(np.zeros((1, 2, 1), dtype=int), DOM), raises(ValueError, "shape")),
    ("Dataset.replace numpy index", lambda: DATA.replace(np.int64(0), [1, 1]).records[0].tolist(), ok(lambda r: r == [1, 1])),
    ("Dataset.replace short record", lambda: DATA.replace(0, [1]), raises(ValueError, "record")),
    ("Dataset.replace negative index", lambda: DATA.replace(-1, [0, 0]), raises(ValueError, "i must be")),
    ("Dataset.replace bool index", lambda: DATA.replace(True, [0, 0]), raises(TypeError, "i must be")),
    ("sample 1e12 records", lambda: DATA.sample(10**12, rng=0), raises(ValueError, "limit")),
    ("Dataset.head(True)", lambda: DATA.head(True), raises(TypeError, "n must be")),
    ("Dataset.head too many", lambda: DATA.head(5), raises(ValueError, "n must be at most 4")),
    ("Dataset.project", lambda: DATA.project(["b"]).domain == dp.Domain({"b": 3}), ok(lambda r: r)),
    ("Dataset.project bare string", lambda: DATA.project("b"), raises(TypeError, "string")),
    ("from_histogram domain dict", lambda: dp.from_histogram(P, {"a": 2}, 10, rng=0), raises(TypeError, "domain")),
    ("from_histogram list", lambda: dp.from_histogram(P.tolist(), DOM, 10, rng=0).n, ok(lambda r: r == 10)),
    ("from_histogram unnormalised", lambda: dp.from_histogram(P * 4, DOM, 10, rng=0), raises(ValueError, "sum to 1")),
    ("independent_data domain None", lambda: dp.independent_data(None, 10, rng=0), raises(TypeError, "domain")),
    ("independent_data, an attribute of 1e9 values", lambda: dp.independent_data(dp.Domain({"a": 10**9}), 10, rng=0), raises(ValueError, "limit")),
    ("independent_data n=1e12", lambda: dp.independent_data(DOM, 10**12, rng=0), raises(ValueError, "limit")),
    ("independent_data numpy n", lambda: dp.independent_data(DOM, np.int32(7), rng=0).n, ok(lambda r: r == 7)),
    ("correlated_data strength bool", lambda: dp.correlated_data(DOM, 10, rng=0, strength=True), raises(TypeError, "strength")),
    ("correlated_data, an attribute of 2^40 values", lambda: dp.correlated_data(dp.Domain({"a": 2**40}), 5, rng=0), raises(ValueError, "limit")),
    ("correlated_data rng None", lambda: dp.correlated_data(DOM, 10, rng=None), raises(TypeError, "rng")),
    # --- workloads ----------------------------------------------------------------------------
    ("marginal attribute set as a bare string", lambda: dp.MarginalWorkload(DOM, ["ab"]), raises(TypeError, "string")),
    ("marginals as a bare string", lambda: dp.MarginalWorkload(DOM, "a"), raises(TypeError, "string")),
    ("marginal over None", lambda: dp.MarginalWorkload(None, [("a",)]), raises(TypeError, "domain")),
    ("marginal 0-way is the total", lambda: dp.MarginalWorkload(DOM, [()]).answer(P).tolist(), ok(lambda r: r == [1.0])),
    ("all_kway way=0", lambda: dp.MarginalWorkload.all_kway(DOM, 0), raises(ValueError, "way")),
    ("all_kway way=-1", lambda: dp.MarginalWorkload.all_kway(DOM, -1), raises(ValueError, "way")),
    ("all_kway way=2.0", lambda: dp.MarginalWorkload.all_kway(DOM, 2.0), raises(TypeError, "way")),
    ("all_kway attributes string", lambda: dp.MarginalWorkload.all_kway(DOM, 1, attributes="ab"), raises(TypeError, "string")),
    ("all_kway of 30 of 60 attributes", lambda: dp.MarginalWorkload.all_kway(dp.Domain.binary(60), 30), raises(ValueError, "limit")),
    ("marginal with 2^64 cells", lambda: dp.MarginalWorkload(dp.Domain({"a": 2**32, "b": 2**32}), [("a", "b")]), raises(ValueError, "limit")),
    ("answer a list", lambda: Q.answer(P.tolist()).sum(), ok(lambda r: abs(r - 2) < 1e-12)),
    ("answer None", lambda: Q.answer(None), raises(TypeError, "p")),
    ("answer a Dataset", lambda: Q.answer(DATA).tolist(), ok(lambda r: np.allclose(r, Q.answer(P)))),
    ("answer a Dataset of another universe", lambda: Q.answer(DATA_OTHER), raises(ValueError, "universe")),
    ("answer float32", lambda: Q.answer(P.astype(np.float32)).size, ok(lambda r: r == 5)),
    ("query numpy index", lambda: Q.query(np.int64(1)).sum(), ok(lambda r: r == 3)),
    ("query -1", lambda: Q.query(-1), raises(ValueError, "i must be")),
    ("subset empty", lambda: Q.subset([]), raises((TypeError, ValueError), "indices")),
    ("subset repeated", lambda: Q.subset([0, 0]).k, ok(lambda r: r == 2)),
    ("subset bools", lambda: Q.subset([True]), raises(TypeError, "indices")),
    ("subset floats", lambda: Q.subset(np.array([0.0])), raises(TypeError, "indices")),
    ("subset keeps the domain", lambda: Q.subset([1, 2]).domain == DOM, ok(lambda r: r)),
    ("matrix with nan", lambda: dp.MatrixWorkload([[0.5, np.nan]]), raises(ValueError, "finite")),
    ("matrix of bools", lambda: dp.MatrixWorkload([[True, False]]).k, ok(lambda r: r == 1)),
    ("matrix empty", lambda: dp.MatrixWorkload(np.zeros((0, 3))), raises(ValueError, "matrix")),
    ("matrix a string", lambda: dp.MatrixWorkload("abc"), raises((TypeError, ValueError), "matrix")),
    ("matrix labels a bare string", lambda: dp.MatrixWorkload([[0.5, 0.5], [1, 0]], labels="ab"), raises(TypeError, "labels")),
    ("matrix domain of the wrong size", lambda: dp.MatrixWorkload(np.ones((2, 5)), domain=DOM), raises(ValueError, "domain")),
    ("matrix domain not a Domain", lambda: dp.MatrixWorkload(np.ones((2, 6)), domain=6), raises(TypeError, "domain")),
    ("random_queries k=0", lambda: dp.random_queries(6, 0, rng=0), raises(ValueError, "k must be")),
    ("random_queries too large", lambda: dp.random_queries(10**6, 10**6, rng=0), raises(ValueError, "limit")),
    ("random_queries numpy density", lambda: dp.random_queries(6, 3, rng=0, density=np.float64(0.3)).k, ok(lambda r: r == 3)),
    ("random_queries over a Domain", lambda: dp.random_queries(DOM, 3, rng=0).domain == DOM, ok(lambda r: r)),
    ("negations twice", lambda: Q.with_negations().with_negations().k, ok(lambda r: r == 20)),
    # --- objects from different universes -----------------------------------------------------
    ("mwem, workload of another universe", lambda: run_mwem(workload=Q_OTHER), raises(ValueError, "universe")),
    ("private MW, workload of another universe", lambda: run_pmw(workload=Q_OTHER), raises(ValueError, "universe")),
    ("IC, workload of another universe", lambda: run_ic(workload=Q_OTHER), raises(ValueError, "universe")),
    ("sweep, workload of another universe", lambda: baselines.max_error_sweep(Q_OTHER, DATA, ks=[1], epsilon=1, delta=1e-5, trials=1, rng=0), raises(ValueError, "universe")),
    ("mwem, negated workload of another universe", lambda: run_mwem(workload=Q_OTHER.with_negations()), raises(ValueError, "universe")),
    ("mwem, matrix workload with its domain", lambda: run_mwem(workload=dp.MatrixWorkload(Q.matrix(), domain=OTHER)), raises(ValueError, "universe")),
    ("mwem, plain matrix workload", lambda: run_mwem(workload=dp.MatrixWorkload(Q.matrix())).synthetic.size, ok(lambda r: r == 6)),
    ("mwem, wrong size", lambda: run_mwem(workload=dp.MarginalWorkload.all_kway(dp.Domain.binary(3), 1)), raises(ValueError, "universe")),
    # --- None / arrays where a Dataset or Workload is expected --------------------------------
    ("mwem data None", lambda: run_mwem(data=None), raises(TypeError, "data")),
    ("mwem data ndarray", lambda: run_mwem(data=P), raises(TypeError, "data")),
    ("mwem workload None", lambda: run_mwem(workload=None), raises(TypeError, "workload")),
    ("mwem workload ndarray", lambda: run_mwem(workload=Q.matrix()), raises(TypeError, "workload")),
    ("private MW workload list", lambda: run_pmw(workload=Q.matrix().tolist()), raises(TypeError, "workload")),
    ("IC data histogram", lambda: run_ic(data=P), raises(TypeError, "data")),
    ("sweep data None", lambda: baselines.max_error_sweep(Q, None, ks=[1], epsilon=1, delta=1e-5, trials=1, rng=0), raises(TypeError, "data")),
    ("sweep workload ndarray", lambda: baselines.max_error_sweep(Q.matrix(), DATA, ks=[1], epsilon=1, delta=1e-5, trials=1, rng=0), raises(TypeError, "workload")),
    ("sweep ks empty", lambda: baselines.max_error_sweep(Q, DATA, ks=[], epsilon=1, delta=1e-5, trials=1, rng=0), raises(ValueError, "ks")),
    ("sweep ks an int", lambda: baselines.max_error_sweep(Q, DATA, ks=3, epsilon=1, delta=1e-5, trials=1, rng=0), raises(TypeError, "ks")),
    ("laplace_answers of a Dataset", lambda: baselines.laplace_answers(DATA, n=4, epsilon=1, rng=0), raises(TypeError, "answers")),
    ("online PMW data histogram", lambda: mw.OnlinePMW(P, epsilon=1, alpha=0.3, rng=0), raises(TypeError, "data")),
    ("learn, workload None", lambda: mw.learn(P, None, alpha=0.3), raises(TypeError, "workload")),
    # --- budgets ------------------------------------------------------------------------------
    ("laplace charged to a zCDP budget", lambda: _spent_rho(lambda b: lap(budget=b)), ok(lambda r: r == pytest.approx(0.5))),
    ("gaussian charged to a zCDP budget", lambda: _spent_rho(lambda b: gauss(budget=b)), ok(lambda r: dp.privacy.zcdp_rho_for(1, 1e-5) * (1 - 1e-3) <= r <= dp.privacy.zcdp_rho_for(1, 1e-5))),
    ("naive gaussian charged to a zCDP budget", lambda: _spent_rho(lambda b: gauss(budget=b, safe=False)), ok(lambda r: r == pytest.approx(1 / (2 * dp.gaussian_sigma(1, 1, 1e-5, safe=False) ** 2)))),
    ("exponential charged to a zCDP budget", lambda: _spent_rho(lambda b: expo(budget=b)), ok(lambda r: r == pytest.approx(0.5))),
    ("approximate sparse to a zCDP budget", lambda: sparse(delta=1e-6, epsilon=0.5, budget=dp.ZCDPBudget(10)), raises(TypeError, "zCDP")),
    ("mwem charged to a zCDP budget", lambda: _spent_rho(lambda b: run_mwem(budget=b)), ok(lambda r: r == pytest.approx(0.5))),
    ("private MW charged to a zCDP budget", lambda: _spent_rho(lambda b: run_pmw(budget=b)), ok(lambda r: r == pytest.approx(0.5))),
    ("online PMW charged to a zCDP budget", lambda: _spent_rho(lambda b: mw.OnlinePMW(DATA, epsilon=1, alpha=0.3, rng=0, budget=b)), ok(lambda r: r == pytest.approx(0.5))),
    ("budget a dict", lambda: lap(budget={"epsilon": 1}), raises(TypeError, "budget")),
    ("budget a float", lambda: lap(budget=1.0), raises(TypeError, "budget")),
    ("mwem budget a float", lambda: run_mwem(budget=1.0), raises(TypeError, "budget")),
    # a ZCDPBudget is charged eps0^2/2 per step since issue 26 (test_budget_charges.py)
    ("IC budget a zCDP budget", lambda: run_ic(budget=dp.ZCDPBudget(10)), ok(lambda r: r.trace)),
    ("IC budget a string", lambda: run_ic(budget="abc"), raises(TypeError, "budget")),
    ("budget numpy epsilon", lambda: dp.PrivacyBudget(np.float64(1.0)).epsilon, ok(lambda r: r == 1.0)),
    ("budget overflow of spent", lambda: _overspend_huge(), raises(dp.BudgetExceededError, "nothing was released")),
    ("budget can_afford nan", lambda: dp.PrivacyBudget(1).can_afford(math.nan), raises(ValueError, "epsilon")),
    ("budget delta without delta", lambda: dp.PrivacyBudget(1).charge(0.1, 1e-6), raises(dp.BudgetExceededError, "nothing")),
    ("online PMW on a one-element universe", lambda: mw.OnlinePMW(dp.Dataset([[0]], ONE), epsilon=1, alpha=0.3, rng=0).answer([1.0]), ok(math.isfinite)),
    ("numeric sparse, delta and a large epsilon", lambda: dp.NumericSparse(0.5, sensitivity=1, epsilon=100, delta=1e-6, rng=0), raises(ValueError, "epsilon")),
    # --- accounting and its overflows ---------------------------------------------------------
    ("advanced composition huge epsilon", lambda: privacy.advanced_composition(1000.0, 10, 1e-6)[0], ok(lambda r: r == math.inf)),
    ("advanced composition huge k", lambda: privacy.advanced_composition(0.01, 10**20, 1e-6)[0], ok(lambda r: math.isfinite(r) and r > 0)),
    ("pure_to_zcdp huge", lambda: privacy.pure_to_zcdp(1e200), ok(lambda r: r == math.inf)),
    ("zcdp_to_approx_dp huge", lambda: privacy.zcdp_to_approx_dp(1e308, 1e-300), ok(lambda r: r == math.inf)),
    ("approx_dp_to_zcdp round trip", lambda: privacy.zcdp_to_approx_dp(privacy.approx_dp_to_zcdp(1.0, 1e-6), 1e-6), ok(lambda r: r == pytest.approx(1.0))),
    ("basic composition overflow", lambda: privacy.basic_composition([1e308, 1e308])[0], ok(lambda r: r == math.inf)),
    ("basic composition empty", lambda: privacy.basic_composition([]), ok(lambda r: r == (0.0, 0.0))),
    ("basic composition of a number", lambda: privacy.basic_composition(1.0), raises(TypeError, "epsilons")),
    ("basic composition of a string", lambda: privacy.basic_composition("12"), raises(TypeError, "epsilons")),
    ("advanced step k numpy", lambda: privacy.advanced_composition_step(0.5, np.int64(10), 1e-6), ok(lambda r: r > 0)),
    # --- noise mechanisms: odd values ---------------------------------------------------------
    ("laplace tiny epsilon", lambda: lap(epsilon=5e-324), raises(ValueError, "epsilon|scale")),
    ("laplace tiny sensitivity", lambda: lap(sensitivity=1e-300), ok(finite)),
    ("laplace huge scale", lambda: lap(sensitivity=1e300, epsilon=1e-10), raises(ValueError, "scale")),
    ("laplace float32 value", lambda: lap(np.float32(0.5)), ok(lambda r: isinstance(r, float))),
    ("laplace 0-d array", lambda: lap(np.array(0.5)), ok(lambda r: isinstance(r, float))),
    ("laplace empty", lambda: lap([]).shape, ok(lambda r: r == (0,))),
    ("laplace 2-D", lambda: lap([[1, 2], [3, 4]]).shape, ok(lambda r: r == (2, 2))),
    ("laplace numpy parameters", lambda: lap(sensitivity=np.float64(1), epsilon=np.float32(0.5), rng=np.int64(3)), ok(finite)),
    ("laplace RandomState", lambda: lap(rng=np.random.RandomState(0)), raises(TypeError, "rng")),
    ("laplace safe a string", lambda: lap(safe="yes"), raises(TypeError, "safe")),
    ("laplace list of strings", lambda: lap(["a"]), raises(TypeError, "value")),
    ("laplace inf value", lambda: lap(math.inf), raises(ValueError, "value")),
    ("laplace huge value is released, not clamped", lambda: lap(1e300), ok(lambda r: r == 1e300)),
    ("gaussian empty", lambda: gauss([]).shape, ok(lambda r: r == (0,))),
    ("gaussian numpy delta", lambda: gauss(delta=np.float64(1e-5)), ok(finite)),
    # as eps -> 0 the analytic sigma tends to the (0, delta) calibration 2 Phi(1/(2 s)) - 1 = delta
    ("gaussian_sigma tiny epsilon", lambda: dp.gaussian_sigma(1.0, 1e-300, 1e-5, safe=False), ok(lambda r: r == pytest.approx(1 / (1e-5 * math.sqrt(2 * math.pi)), rel=1e-6))),
    ("gaussian_sigma subnormal epsilon", lambda: dp.gaussian_sigma(1.0, 5e-324, 1e-5, safe=False), ok(lambda r: r == pytest.approx(1 / (1e-5 * math.sqrt(2 * math.pi)), rel=1e-6))),
    # the discrete Gaussian's calibration (zCDP, CKS conversion): at eps -> 0, delta = sqrt(2 rho / e)
    ("discrete gaussian_sigma tiny epsilon", lambda: dp.gaussian_sigma(1.0, 1e-300, 1e-5), ok(lambda r: r == pytest.approx(1 / (1e-5 * math.sqrt(math.e)), rel=1e-6))),
    ("discrete gaussian tiny epsilon", lambda: gauss(epsilon=1e-300), ok(finite)),
    ("discrete gaussian sigma too large for the sampler", lambda: gauss(epsilon=1e-300, delta=1e-9), raises(ValueError, "too large")),
    ("gaussian_sigma beyond the doubles", lambda: dp.gaussian_sigma(1e308, 1.0, 1e-5), raises(ValueError, "sigma")),
    ("gaussian_sigma classic tiny epsilon", lambda: dp.gaussian_sigma(1.0, 1e-308, 1e-5, calibration="classic"), raises(ValueError, "epsilon")),
    ("gaussian_sigma huge epsilon", lambda: dp.gaussian_sigma(1.0, 1e6, 1e-5), ok(lambda r: 0 < r < 1e-3)),
    ("gaussian_sigma tiny delta", lambda: dp.gaussian_sigma(1.0, 1.0, 1e-300), ok(lambda r: math.isfinite(r))),
    ("gaussian_sigma tiny sensitivity", lambda: dp.gaussian_sigma(1e-300, 1.0, 1e-5), ok(lambda r: 0 < r < 1e-299)),
    ("exponential huge scores", lambda: expo([0.0, 1e308], epsilon=1e10), ok(lambda r: r == 1)),
    ("exponential opposite huge scores", lambda: expo([1e308, -1e308]), ok(lambda r: r == 0)),
    ("exponential overflowing scale, exact sampler", lambda: expo([0.0, 1.0], sensitivity=1e-300, epsilon=1e300), ok(lambda r: r == 1)),
    ("exponential overflowing scale, teaching sampler", lambda: expo(sensitivity=1e-300, epsilon=1e300, safe=False), raises(ValueError, "epsilon")),
    ("exponential tiny epsilon and sensitivity", lambda: dp.exponential([0.0, 1e12], sensitivity=1e-300, epsilon=1e-300, rng=0, size=400), ok(lambda r: r.min() == 1)),
    ("exponential integer scores beyond 2^53", lambda: expo([2**53 + 1, 2**53 + 3]), raises(ValueError, "scores")),
    ("exponential scores beyond the doubles", lambda: expo([10**400, 0]), raises(ValueError, "scores")),
    ("exponential epsilon beyond the doubles", lambda: expo(epsilon=10**400), raises(ValueError, "epsilon")),
    ("distinguisher n = 0", lambda: iterative.exponential_distinguisher(np.zeros(3), np.ones(3), n=0, epsilon=1, rng=0), raises(ValueError, "n")),
    ("distinguisher n = 2.5", lambda: iterative.exponential_distinguisher(np.zeros(3), np.ones(3), n=2.5, epsilon=1, rng=0), raises(TypeError, "n")),
    ("distinguisher shapes differ", lambda: iterative.exponential_distinguisher(np.zeros(3), np.ones(4), n=10, epsilon=1, rng=0), raises(ValueError, "synthetic")),
    ("audit exponential sampler eps = 0", lambda: audit.exponential_sampler(0.0), raises(ValueError, "epsilon")),
    ("exponential safe not a bool", lambda: expo(safe="yes"), raises(TypeError, "safe")),
    ("exponential huge size", lambda: expo(size=10**12), raises(ValueError, "size")),
    ("exponential huge size, teaching sampler", lambda: expo(size=10**8, safe=False), raises(ValueError, "size")),
    ("exponential one outcome", lambda: expo([5.0]), ok(lambda r: r == 0)),
    ("exponential size=0", lambda: expo(size=0), raises(ValueError, "size")),
    ("exponential size=True", lambda: expo(size=True), raises(TypeError, "size")),
    ("exponential scores a string", lambda: expo("ab"), raises(TypeError, "scores")),
    ("exponential scores nan", lambda: expo([0.0, math.nan]), raises(ValueError, "scores")),
    ("sparse numpy value", lambda: sparse().test(np.float64(0.7)), ok(lambda r: isinstance(r, bool))),
    ("sparse nan value", lambda: sparse().test(math.nan), raises(ValueError, "value")),
    ("sparse string value", lambda: sparse().test("0.5"), raises(TypeError, "value")),
    ("sparse array value", lambda: sparse().test(np.array([0.5])), raises(TypeError, "value")),
    ("sparse inf threshold", lambda: dp.AboveThreshold(math.inf, sensitivity=1, epsilon=1, rng=0), raises(ValueError, "threshold")),
    ("sparse huge cutoff", lambda: sparse(cutoff=10**15), raises(ValueError, "epsilon|cutoff")),
    ("sparse large cutoff works", lambda: sparse(cutoff=10**6).test(0.0), ok(lambda r: isinstance(r, bool))),
    ("numeric sparse approximate", lambda: dp.NumericSparse(0.5, sensitivity=0.01, epsilon=1, delta=1e-6, rng=0).test(5.0), ok(lambda r: r is None or math.isfinite(r))),
    ("sparse delta numpy", lambda: sparse(delta=np.float64(1e-6), epsilon=0.5).delta, ok(lambda r: r == 1e-6)),
    # --- iterative algorithms -----------------------------------------------------------------
    ("mwem small n epsilon", lambda: run_mwem(epsilon=1e-3, rounds=3, iterations=50).synthetic, ok(lambda r: finite(r) and abs(r.sum() - 1) < 1e-9)),
    ("mwem tiny epsilon many rounds", lambda: run_mwem(epsilon=1e-6, rounds=20, iterations=20).synthetic, ok(lambda r: finite(r) and abs(r.sum() - 1) < 1e-9)),
    ("mwem rounds=0", lambda: run_mwem(rounds=0), raises(ValueError, "rounds")),
    ("mwem rounds=True", lambda: run_mwem(rounds=True), raises(TypeError, "rounds")),
    ("private MW alpha=1.5", lambda: run_pmw(alpha=1.5), raises(ValueError, "alpha")),
    ("private MW numpy alpha", lambda: run_pmw(alpha=np.float64(0.4)).synthetic.size, ok(lambda r: r == 6)),
    ("learn unknown adversary", lambda: mw.learn(P, Q, alpha=0.3, adversary="best"), raises(ValueError, "adversary")),
    ("online PMW query too long", lambda: mw.OnlinePMW(DATA, epsilon=1, alpha=0.3, rng=0).answer(np.ones(7)), raises(ValueError, "q must")),
    ("online PMW query entries > 1", lambda: mw.OnlinePMW(DATA, epsilon=1, alpha=0.3, rng=0).answer(np.full(6, 2.0)), raises(ValueError, "q must")),
    ("online PMW query a list", lambda: mw.OnlinePMW(DATA, epsilon=1, alpha=0.3, rng=0).answer([1, 0, 0, 0, 0, 0]), ok(lambda r: 0 <= r <= 1 or math.isfinite(r))),
    ("IC alpha nan", lambda: run_ic(alpha=math.nan), raises(ValueError, "alpha")),
    ("halving DUA no candidates", lambda: median.HalvingDUA(np.zeros((0, 3))), raises(ValueError, "candidates")),
    ("small_databases too many", lambda: median.small_databases(10**6, 3), raises(ValueError, "limit")),
    ("small_databases 2000 cells, m=2", lambda: median.small_databases(2000, 2), raises(ValueError, "limit")),
    # --- theory -------------------------------------------------------------------------------
    ("laplace_max_error k=0", lambda: theory.laplace_max_error(0, 10, 1.0), raises(ValueError, "k must be")),
    ("laplace_max_error enormous k", lambda: theory.laplace_max_error(10**400, 10, 1.0), ok(lambda r: r == math.inf)),
    ("expected max error k=1e9", lambda: theory.laplace_expected_max_error(10**9, 100, 1.0), ok(lambda r: r == pytest.approx(1e7 * (math.log(1e9) + 0.5772156649 + 0.5e-9), rel=1e-9))),
    ("expected max error k=3", lambda: theory.laplace_expected_max_error(3, 1, 1.0), ok(lambda r: r == pytest.approx(3 * (1 + 1 / 2 + 1 / 3)))),
    ("gaussian_max_error delta 0", lambda: theory.gaussian_max_error(10, 100, 1.0, 0.0), raises(ValueError, "delta")),
    ("exponential error 0 outcomes", lambda: theory.exponential_mechanism_error(0, 1, 1), raises(ValueError, "num_outcomes")),
    ("mistake bound on one cell", lambda: theory.mw_mistake_bound(1, 0.1), ok(lambda r: r == 0)),
    ("mistake bound huge universe", lambda: theory.mw_mistake_bound(2**2000, 0.5), ok(lambda r: r == pytest.approx(16 * 2000 * math.log(2)))),
    ("private MW sample size tiny alpha", lambda: theory.private_mw_sample_size(10, 10, 1e-200, 1.0), ok(lambda r: r == math.inf)),
    # --- audit --------------------------------------------------------------------------------
    ("clopper_pearson k > n", lambda: audit.clopper_pearson(11, 10, 0.05), raises(ValueError, "successes")),
    ("clopper_pearson k < 0", lambda: audit.clopper_pearson(-1, 10, 0.05), raises(ValueError, "successes")),
    ("clopper_pearson alpha 1.5", lambda: audit.clopper_pearson(3, 10, 1.5), raises(ValueError, "alpha")),
    ("clopper_pearson n = 0", lambda: audit.clopper_pearson(0, 0, 0.05), raises(ValueError, "trials")),
    ("clopper_pearson float k", lambda: audit.clopper_pearson(2.5, 10, 0.05), raises(TypeError, "successes")),
    ("clopper_pearson numpy ints", lambda: audit.clopper_pearson(np.int64(3), np.int64(10), 0.05), ok(lambda r: 0 < r[0] < 0.3 < r[1] < 1)),
    ("audit sampler returns nan", lambda: audit.audit(nan_sampler, 0.0, 1.0, epsilon=1, samples=200, rng=0), raises(ValueError, "sampler")),
    ("audit sampler wrong length", lambda: audit.audit(short_sampler, 0.0, 1.0, epsilon=1, samples=200, rng=0), raises(ValueError, "sampler")),
    ("audit sampler 2-D output", lambda: audit.audit(matrix_sampler, 0.0, 1.0, epsilon=1, samples=200, rng=0), raises(ValueError, "sampler")),
    ("audit huge epsilon", lambda: audit.audit(audit.laplace_sampler(), 0.0, 1.0, epsilon=1000.0, samples=200, rng=0).flagged, ok(lambda r: r is False)),
    ("audit sampler not callable", lambda: audit.audit(None, 0.0, 1.0, epsilon=1, samples=200, rng=0), raises(TypeError, "sampler")),
    # --- Adult ---------------------------------------------------------------------------------
    ("load_adult an int", lambda: dp.load_adult(123), raises(TypeError, "attributes")),
    ("load_adult a bare attribute name", lambda: dp.load_adult("age"), raises(ValueError, "preset")),
    ("load_adult repeated attribute", lambda: dp.load_adult(["age", "age"]), raises(ValueError, "distinct")),
    ("load_adult a tuple", lambda: dp.load_adult(("sex", "race")).domain.names, ok(lambda r: r == ("sex", "race"))),
    # --- results ------------------------------------------------------------------------------
    ("max_error of empty answers", lambda: results.max_error([], []), raises(ValueError, "empty")),
    ("kl of a distribution with itself", lambda: results.kl_divergence(P, P), ok(lambda r: r == 0)),
    ("kl of lists", lambda: results.kl_divergence(P.tolist(), np.full(6, 1 / 6).tolist()), ok(lambda r: r > 0)),
    ("trace column unknown", lambda: run_mwem().column("privacy"), raises(ValueError, "name")),
    ("trace marks non-private fields", lambda: dp.results.Round.NON_PRIVATE, ok(lambda r: {"max_error", "potential"} <= set(r))),
    # --- the floating-point-safe Gaussian, ERM output perturbation (this session) ------------
    ("gaussian bool value", lambda: gauss(True), ok(finite)),
    ("gaussian 2-d value keeps its shape", lambda: gauss(np.zeros((3, 4))).shape, ok(lambda r: r == (3, 4))),
    ("gaussian complex value", lambda: gauss(1j), raises(TypeError, "value")),
    ("gaussian string delta", lambda: gauss(delta="1e-5"), raises(TypeError, "delta")),
    ("gaussian delta 1", lambda: gauss(delta=1.0), raises(ValueError, "delta")),
    ("gaussian float seed", lambda: gauss(rng=1.5), raises(TypeError, "rng")),
    ("gaussian safe a string", lambda: gauss(safe="no"), raises(TypeError, "safe")),
    ("gaussian huge sensitivity (was an OverflowError after charging)", lambda: gauss(sensitivity=1e300), ok(finite)),
    ("gaussian value near the top of the doubles is not clamped", lambda: gauss(1.7e308, sensitivity=1e300), ok(lambda r: 1.69e308 < r < 1.71e308)),
    ("laplace huge sensitivity (was an OverflowError after charging)", lambda: lap(sensitivity=1e300), ok(finite)),
    ("laplace values near the top of the doubles", lambda: lap(np.array([1e308, -1e308]), sensitivity=1e300), ok(lambda r: abs(r[0] - 1e308) < 1e301 and abs(r[1] + 1e308) < 1e301)),
    ("gaussian tiny sensitivity (was clamped to 8e-286)", lambda: gauss(sensitivity=1e-300), ok(lambda r: abs(r - 0.5) < 1e-290)),
    ("laplace tiny sensitivity (was clamped to 8e-286)", lambda: lap(sensitivity=1e-300), ok(lambda r: abs(r - 0.5) < 1e-290)),
    ("sparse on a value beyond int64 grid steps", lambda: dp.Sparse(0.0, sensitivity=1e-300, epsilon=1, rng=0).test(1.0), ok(lambda r: r is True)),
    ("numeric sparse answers a huge value exactly", lambda: dp.NumericSparse(0.0, sensitivity=1.0, epsilon=1, rng=0).test(1e300), ok(lambda r: r == 1e300)),
    ("gaussian huge epsilon", lambda: gauss(epsilon=1e6), ok(lambda r: abs(r - 0.5) < 0.01)),
    ("gaussian a million coordinates", lambda: gauss(np.zeros(10**6)).std(), ok(lambda r: r == pytest.approx(dp.gaussian_sigma(1, 1, 1e-5), rel=0.01))),
    ("gaussian_sigma numpy scalars", lambda: dp.gaussian_sigma(np.float32(1), np.int64(1), np.float64(1e-5)), ok(lambda r: r == dp.gaussian_sigma(1.0, 1.0, 1e-5))),
    ("zcdp_delta negative rho", lambda: privacy.zcdp_delta(-1, 1), raises(ValueError, "rho")),
    ("zcdp_delta nan rho", lambda: privacy.zcdp_delta(float("nan"), 1), raises(ValueError, "rho")),
    ("zcdp_delta rho 0", lambda: privacy.zcdp_delta(0.0, 1.0), ok(lambda r: r == 0)),
    ("zcdp_delta tighter than Bun-Steinke", lambda: privacy.zcdp_delta(0.1, privacy.zcdp_to_approx_dp(0.1, 1e-6)), ok(lambda r: 0 < r < 1e-6)),
    ("zcdp_rho_for delta 0", lambda: privacy.zcdp_rho_for(1, 0), raises(ValueError, "delta")),
    ("zcdp_rho_for a string", lambda: privacy.zcdp_rho_for("1", 1e-5), raises(TypeError, "epsilon")),
    ("zcdp_rho_for huge epsilon", lambda: privacy.zcdp_rho_for(1e6, 1e-5), ok(lambda r: 0.99e6 < r < 1e6)),
    ("erm nan features", lambda: erm.output_perturbation([[np.nan, 0.0]], [1.0], lam=1, epsilon=1, rng=0), raises(ValueError, "finite")),
    ("erm 0/1 labels", lambda: erm.output_perturbation(ERM_X, [0.0, 1.0], lam=1, epsilon=1, rng=0), raises(ValueError, "labels")),
    ("erm lam 0", lambda: erm.output_perturbation(ERM_X, ERM_Y, lam=0, epsilon=1, rng=0), raises(ValueError, "lam")),
    ("erm lam so small the noise is unrepresentable", lambda: erm.output_perturbation(ERM_X, ERM_Y, lam=1e-300, epsilon=1, rng=0), raises(ValueError, "too large")),
    ("erm 1-d features", lambda: erm.output_perturbation([0.5, 0.2], ERM_Y, lam=1, epsilon=1, rng=0), raises(ValueError, "2-dimensional")),
    ("erm labels a string", lambda: erm.output_perturbation(ERM_X, "ab", lam=1, epsilon=1, rng=0), raises(TypeError, "labels")),
    ("erm safe an int", lambda: erm.output_perturbation(ERM_X, ERM_Y, lam=1, epsilon=1, rng=0, safe=1), raises(TypeError, "safe")),
    ("erm features as lists", lambda: erm.output_perturbation([[0.6, 0.8], [1, 0]], [1, -1], lam=1, epsilon=1, rng=0).shape, ok(lambda r: r == (2,))),
    ("erm features outside the unit ball", lambda: erm.output_perturbation(ERM_X * 2, ERM_Y, lam=1, epsilon=1, rng=0), raises(ValueError, "norm")),
    ("erm no features (was: 'sensitivity must be > 0')", lambda: erm.output_perturbation(np.zeros((2, 0)), ERM_Y, lam=1, epsilon=1, rng=0), raises(ValueError, "column")),
    ("erm excess risk of a wrong-length theta (was a numpy matmul error)", lambda: erm.excess_risk(np.zeros(3), ERM_X, ERM_Y, lam=1), raises(ValueError, "theta must have 2")),
    ("erm objective of a wrong-length theta", lambda: erm.objective(np.zeros(1), ERM_X, ERM_Y, lam=1), raises(ValueError, "theta")),
    ("erm box, non-binary label", lambda: erm.LogisticERMBox("b")(DATA, None, epsilon=1, beta=0.1, rng=0), raises(ValueError, "binary")),
    ("erm box, unknown label", lambda: erm.LogisticERMBox("zz")(DATA, None, epsilon=1, beta=0.1, rng=0), raises(ValueError, "unknown attribute")),
    ("erm same seed, same theta", lambda: np.array_equal(*(erm.output_perturbation(ERM_X, ERM_Y, lam=1, epsilon=1, rng=4) for _ in range(2))), ok(lambda r: r)),
    ("gaussian_answers empty (was: 'sensitivity must be > 0')", lambda: baselines.gaussian_answers([], n=10, epsilon=1, delta=1e-5, rng=0), raises(ValueError, "answers must not be empty")),
    ("laplace_answers empty", lambda: baselines.laplace_answers([], n=10, epsilon=1, rng=0), raises(ValueError, "answers must not be empty")),
    ("gaussian_answers n a float", lambda: baselines.gaussian_answers([0.5], n=2.5, epsilon=1, delta=1e-5, rng=0), raises(TypeError, "n")),
    ("projection mechanism, workload of another universe", lambda: projection.projection_mechanism(DATA, Q_OTHER, epsilon=1, delta=1e-5, rng=0), raises(ValueError, "universe")),
    ("projection mechanism charged to a zCDP budget", lambda: _spent_rho(lambda b: projection.projection_mechanism(DATA, Q, epsilon=1, delta=1e-5, rng=0, budget=b)), ok(lambda r: 0 < r <= privacy.zcdp_rho_for(1, 1e-5))),
    ("projection mechanism delta 0", lambda: projection.projection_mechanism(DATA, Q, epsilon=1, delta=0, rng=0), raises(ValueError, "delta")),
    ("theory gaussian max error, enormous k", lambda: theory.gaussian_max_error(10**30, 10, 1, 1e-5), ok(lambda r: math.isfinite(r) and r > 1e15)),
    ("theory sigma_eps_delta is the mechanism's", lambda: theory.sigma_eps_delta(1, 1e-6), ok(lambda r: r == dp.gaussian_sigma(1, 1, 1e-6) > dp.gaussian_sigma(1, 1, 1e-6, safe=False))),
]  # fmt: skip


def _spent_rho(run) -> float:
    budget = dp.ZCDPBudget(100.0)
    run(budget)
    return budget.spent


def _overspend_huge():
    budget = dp.PrivacyBudget(1e308)
    budget.charge(1e308)
    budget.charge(1e308)


def _check(call, expected):
    if isinstance(expected, tuple):
        error, match = expected
        with pytest.raises(error, match=match):
            call()
    else:
        assert expected(call())


@pytest.mark.parametrize(("name", "call", "expected"), CASES, ids=[c[0] for c in CASES])
def test_unusual_call(name, call, expected):
    _check(call, expected)


def test_the_cases_are_many_and_distinct():
    assert len({c[0] for c in CASES}) == len(CASES) >= 150
    assert HEAVY <= {c[0] for c in CASES}


# --- refusals change nothing ------------------------------------------------------------------

REFUSALS = [
    ("laplace tiny epsilon", lambda b, g: dp.laplace(0.5, sensitivity=1, epsilon=1e-300, rng=g, budget=b), ValueError),
    ("laplace over budget", lambda b, g: dp.laplace(0.5, sensitivity=1, epsilon=5.0, rng=g, budget=b), dp.BudgetExceededError),
    ("gaussian sigma beyond doubles", lambda b, g: dp.gaussian(0.5, sensitivity=1e308, epsilon=1, delta=1e-5, rng=g, budget=b), ValueError),
    ("gaussian sigma too large for the exact sampler", lambda b, g: dp.gaussian(np.zeros(4), sensitivity=1, epsilon=1e-300, delta=1e-9, rng=g, budget=b), ValueError),
    ("gaussian safe not a bool", lambda b, g: dp.gaussian(0.5, sensitivity=1, epsilon=1, delta=1e-5, rng=g, budget=b, safe="yes"), TypeError),
    ("gaussian_answers empty", lambda b, g: baselines.gaussian_answers([], n=10, epsilon=1, delta=1e-5, rng=g, budget=b), ValueError),
    ("projection, workload of another universe", lambda b, g: projection.projection_mechanism(DATA, Q_OTHER, epsilon=1, delta=1e-5, rng=g, budget=b), ValueError),
    ("exponential overflowing scale", lambda b, g: dp.exponential([0, 1], sensitivity=1e-300, epsilon=1e300, rng=g, budget=b, safe=False), ValueError),
    ("numeric sparse, delta and a large epsilon", lambda b, g: dp.NumericSparse(0.5, sensitivity=1, epsilon=100, delta=1e-6, rng=g, budget=b), ValueError),
    ("sparse huge cutoff", lambda b, g: dp.Sparse(0.5, sensitivity=1, epsilon=1, cutoff=10**15, rng=g, budget=b), ValueError),
    ("mwem, workload of another universe", lambda b, g: mw.mwem(DATA, Q_OTHER, epsilon=1, rounds=2, rng=g, budget=b), ValueError),
    ("private MW bad alpha", lambda b, g: mw.private_mw(DATA, Q, epsilon=1, alpha=2.0, rng=g, budget=b), ValueError),
    ("online PMW huge max_hard", lambda b, g: mw.OnlinePMW(DATA, epsilon=1, alpha=0.3, rng=g, max_hard=10**15, budget=b), ValueError),
    ("IC, workload of another universe", lambda b, g: run_ic(workload=Q_OTHER, rng=g, budget=b), ValueError),
    ("sweep, data of another universe", lambda b, g: baselines.max_error_sweep(Q, DATA_OTHER, ks=[1], epsilon=1, delta=1e-5, trials=1, rng=g), ValueError),
]  # fmt: skip


@pytest.mark.parametrize(("name", "call", "error"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_a_refusal_charges_nothing_and_draws_nothing(name, call, error):
    budget = dp.PrivacyBudget(2.0, 1e-3)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    records = DATA.records.copy()
    with pytest.raises(error):
        call(budget, gen)
    assert budget.ledger == []
    assert gen.bit_generator.state == state
    np.testing.assert_array_equal(DATA.records, records)


def test_a_refused_zcdp_charge_changes_nothing():
    budget = dp.ZCDPBudget(1.0)
    with pytest.raises(TypeError, match="zCDP"):
        dp.Sparse(0.5, sensitivity=1, epsilon=0.5, delta=1e-6, rng=0, budget=budget)
    with pytest.raises(dp.BudgetExceededError):
        dp.laplace(0.0, sensitivity=1, epsilon=2.0, rng=0, budget=budget)  # rho = 2 > 1
    assert budget.ledger == []


# --- inputs are never modified; the same seed gives the same result ---------------------------


def test_inputs_are_not_modified():
    value, scores, p = np.array([0.25, 3.0]), np.array([1.0, 2.0, 3.0]), P.copy()
    matrix = Q.matrix()
    dp.laplace(value, sensitivity=1, epsilon=1, rng=0)
    dp.gaussian(value, sensitivity=1, epsilon=1, delta=1e-5, rng=0)
    dp.exponential(scores, sensitivity=1, epsilon=1, rng=0)
    Q.answer(p)
    mw.learn(p, Q, alpha=0.3)
    workload = dp.MatrixWorkload(matrix)
    matrix[0, 0] = 0.5  # changing the caller's array afterwards does not change the workload
    assert workload.matrix()[0, 0] == 1.0
    records = DATA.records.copy()
    run_mwem(), run_pmw(), run_ic()
    np.testing.assert_array_equal(value, [0.25, 3.0])
    np.testing.assert_array_equal(scores, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(p, P)
    np.testing.assert_array_equal(DATA.records, records)


def _transcript(sv, stream):
    return [sv.test(v) for v in stream if not sv.halted]


REPRODUCIBLE = [
    ("laplace vector", lambda rng: dp.laplace(np.zeros(50), sensitivity=1, epsilon=1, rng=rng)),
    ("laplace scalar", lambda rng: dp.laplace(0.0, sensitivity=1, epsilon=1, rng=rng)),
    ("gaussian", lambda rng: dp.gaussian(np.zeros(5), sensitivity=1, epsilon=1, delta=1e-5, rng=rng)),
    ("exponential", lambda rng: dp.exponential(np.arange(20.0), sensitivity=10, epsilon=1, rng=rng, size=30)),
    ("sparse", lambda rng: _transcript(dp.Sparse(0.5, sensitivity=0.2, epsilon=1, cutoff=3, rng=rng), [0, 1, 0.4, 0.6] * 5)),
    ("numeric sparse", lambda rng: _transcript(dp.NumericSparse(0.5, sensitivity=0.2, epsilon=1, cutoff=2, rng=rng), [0, 1, 0.4, 0.6] * 5)),
    ("mwem", lambda rng: run_mwem(rng=rng).synthetic),
    ("private MW", lambda rng: run_pmw(rng=rng).synthetic),
    ("IC", lambda rng: run_ic(rng=rng).synthetic),
    ("online PMW", lambda rng: [mw.OnlinePMW(DATA, epsilon=1, alpha=0.3, rng=rng).answer(np.eye(6)[i]) for i in range(1)]),
    ("independent data", lambda rng: dp.independent_data(DOM, 20, rng=rng).records),
    ("random queries", lambda rng: dp.random_queries(DOM, 4, rng=rng).matrix()),
]  # fmt: skip


@pytest.mark.parametrize(("name", "run"), REPRODUCIBLE, ids=[r[0] for r in REPRODUCIBLE])
def test_the_same_seed_gives_the_same_result(name, run):
    first, again = run(7), run(7)
    np.testing.assert_array_equal(np.asarray(first, dtype=object), np.asarray(again, dtype=object))
    from_generator = run(np.random.default_rng(7)), run(np.random.default_rng(7))
    np.testing.assert_array_equal(*[np.asarray(r, dtype=object) for r in from_generator])


@pytest.mark.parametrize("name", ["laplace vector", "gaussian", "exponential", "mwem"])
def test_a_passed_generator_is_consumed(name):
    run = dict(REPRODUCIBLE)[name]
    gen = np.random.default_rng(7)
    assert not np.array_equal(np.asarray(run(gen)), np.asarray(run(gen)))


def test_release_drops_the_non_private_trace_fields():
    result = run_mwem()
    public = result.release()
    assert all(
        math.isnan(getattr(r, f)) for r in public.trace for f in dp.results.Round.NON_PRIVATE
    )
    assert not np.isnan(result.column("max_error")).any()  # the original keeps its diagnostics
    np.testing.assert_array_equal(public.synthetic, result.synthetic)
    assert [r.query for r in public.trace] == [r.query for r in result.trace]
    public.synthetic[0] = -1.0  # a copy
    assert result.synthetic[0] >= 0
