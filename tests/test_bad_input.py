# ruff: noqa: E501  (a table of one-line cases reads best unwrapped)
"""Bad input gets a clear ValueError/TypeError naming the parameter, never a NaN or a crash."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpteach as dp
from dpteach import privacy, results, theory

DOM = dp.Domain({"a": 2, "b": 3})
DATA = dp.Dataset([[0, 1], [1, 2], [1, 0]], DOM)
P = DATA.histogram()
Q = dp.MarginalWorkload.all_kway(DOM, 1)


def lap(**kw):
    args = {"sensitivity": 1.0, "epsilon": 1.0, "rng": 0} | kw
    return dp.laplace(0.5, **args)


def gauss(**kw):
    args = {"sensitivity": 1.0, "epsilon": 1.0, "delta": 1e-5, "rng": 0} | kw
    return dp.gaussian(0.5, **args)


BAD_EPSILONS = [
    (0, ValueError),
    (-1, ValueError),
    (math.nan, ValueError),
    (math.inf, ValueError),
    (-math.inf, ValueError),
    (True, TypeError),
    ("1", TypeError),
    (None, TypeError),
]

CASES = [
    # epsilon, for each mechanism family
    *[(f"laplace eps={e!r}", lambda e=e: lap(epsilon=e), err, "epsilon") for e, err in BAD_EPSILONS],
    *[(f"gaussian eps={e!r}", lambda e=e: gauss(epsilon=e), err, "epsilon") for e, err in BAD_EPSILONS[:3]],
    ("exponential eps=0", lambda: dp.exponential([1, 2], sensitivity=1, epsilon=0, rng=0), ValueError, "epsilon"),
    ("sparse eps=-1", lambda: dp.Sparse(0.5, sensitivity=1, epsilon=-1, rng=0), ValueError, "epsilon"),
    ("budget eps=nan", lambda: dp.PrivacyBudget(math.nan), ValueError, "epsilon"),
    ("budget eps=True", lambda: dp.PrivacyBudget(True), TypeError, "epsilon"),
    # delta outside [0, 1)
    ("gaussian delta=0", lambda: gauss(delta=0), ValueError, "delta"),
    ("gaussian delta=1", lambda: gauss(delta=1), ValueError, "delta"),
    ("gaussian delta=-0.1", lambda: gauss(delta=-0.1), ValueError, "delta"),
    ("gaussian delta=2", lambda: gauss(delta=2.0), ValueError, "delta"),
    ("budget delta=1", lambda: dp.PrivacyBudget(1.0, 1.0), ValueError, "delta"),
    ("zcdp delta=0", lambda: privacy.zcdp_to_approx_dp(0.1, 0.0), ValueError, "delta"),
    # sensitivities and other scales
    ("laplace sensitivity=0", lambda: lap(sensitivity=0), ValueError, "sensitivity"),
    ("laplace sensitivity=nan", lambda: lap(sensitivity=math.nan), ValueError, "sensitivity"),
    ("gaussian calibration", lambda: gauss(calibration="fast"), ValueError, "calibration"),
    ("classic calibration eps>=1", lambda: gauss(calibration="classic"), ValueError, "epsilon"),
    ("sparse cutoff=0", lambda: dp.Sparse(0.5, sensitivity=1, epsilon=1, rng=0, cutoff=0), ValueError, "cutoff"),
    ("sparse cutoff=1.5", lambda: dp.Sparse(0.5, sensitivity=1, epsilon=1, rng=0, cutoff=1.5), TypeError, "cutoff"),
    ("sparse threshold=nan", lambda: dp.Sparse(math.nan, sensitivity=1, epsilon=1, rng=0), ValueError, "threshold"),
    # values and scores
    ("laplace value=nan", lambda: dp.laplace(math.nan, sensitivity=1, epsilon=1, rng=0), ValueError, "value"),
    ("laplace value='x'", lambda: dp.laplace("x", sensitivity=1, epsilon=1, rng=0), TypeError, "value"),
    ("exponential scores 2-D", lambda: dp.exponential([[1, 2]], sensitivity=1, epsilon=1, rng=0), ValueError, "scores"),
    ("exponential scores empty", lambda: dp.exponential([], sensitivity=1, epsilon=1, rng=0), ValueError, "scores"),
    ("exponential scores inf", lambda: dp.exponential([1, math.inf], sensitivity=1, epsilon=1, rng=0), ValueError, "scores"),
    # rng
    ("rng=None", lambda: lap(rng=None), TypeError, "rng"),
    ("rng=1.5", lambda: lap(rng=1.5), TypeError, "rng"),
    ("rng=-3", lambda: lap(rng=-3), ValueError, "rng"),
    ("rng=True", lambda: lap(rng=True), TypeError, "rng"),
    # histograms
    ("histogram negative", lambda: Q.answer(np.array([1.5, -0.5, 0, 0, 0, 0])), ValueError, "non-negative"),
    ("histogram sum != 1", lambda: Q.answer(P * 2), ValueError, "sum to 1"),
    ("histogram wrong length", lambda: Q.answer(np.full(5, 0.2)), ValueError, "length 6"),
    ("histogram with nan", lambda: Q.answer(np.array([math.nan, 1, 0, 0, 0, 0])), ValueError, "finite"),
    ("histogram 2-D", lambda: Q.answer(P.reshape(2, 3)), ValueError, "1-dimensional"),
    ("kl q wrong length", lambda: results.kl_divergence(P, np.full(3, 1 / 3)), ValueError, "length"),
    # queries
    ("matrix entries > 1", lambda: dp.MatrixWorkload([[0.5, 2.0]]), ValueError, r"\[0, 1\]"),
    ("matrix entries < 0", lambda: dp.MatrixWorkload([[-0.1, 0.5]]), ValueError, r"\[0, 1\]"),
    ("matrix 1-D", lambda: dp.MatrixWorkload([0.5, 0.5]), ValueError, "matrix"),
    ("matrix labels", lambda: dp.MatrixWorkload([[0.5, 0.5]], labels=["a", "b"]), ValueError, "labels"),
    ("query index out of range", lambda: Q.query(Q.k), ValueError, "query index"),
    ("query index bool", lambda: Q.query(True), TypeError, "i must be an integer"),
    ("marginal unknown attribute", lambda: dp.MarginalWorkload(DOM, [("a", "z")]), ValueError, "unknown attribute 'z'"),
    ("marginal repeated attribute", lambda: dp.MarginalWorkload(DOM, [("a", "a")]), ValueError, "distinct"),
    ("marginal no sets", lambda: dp.MarginalWorkload(DOM, []), ValueError, "marginals"),
    ("all_kway way too big", lambda: dp.MarginalWorkload.all_kway(DOM, 3), ValueError, "way"),
    ("random queries density", lambda: dp.random_queries(4, 2, rng=0, density=1.0), ValueError, "density"),
    # domains and records
    ("domain empty", lambda: dp.Domain({}), ValueError, "attributes"),
    ("domain size 0", lambda: dp.Domain({"a": 0}), ValueError, "size of attribute 'a'"),
    ("domain size float", lambda: dp.Domain({"a": 2.5}), TypeError, "size of attribute 'a'"),
    ("domain duplicate name", lambda: dp.Domain([("a", 2), ("a", 3)]), ValueError, "twice"),
    ("dense universe too large", lambda: dp.Domain.binary(40).check_dense(), ValueError, "dense limit"),
    ("ravel on a huge universe", lambda: dp.Domain.binary(40).ravel([[0] * 40]), ValueError, "dense limit"),
    ("records out of range", lambda: dp.Dataset([[0, 3]], DOM), ValueError, "attribute 'b'"),
    ("records negative", lambda: dp.Dataset([[-1, 0]], DOM), ValueError, "attribute 'a'"),
    ("records wrong width", lambda: dp.Dataset([[0, 1, 2]], DOM), ValueError, r"shape \(n, 2\)"),
    ("records non-integer", lambda: dp.Dataset([[0.5, 1]], DOM), TypeError, "integer"),
    ("records empty", lambda: dp.Dataset(np.zeros((0, 2), dtype=int), DOM), ValueError, "at least one"),
    ("dataset domain type", lambda: dp.Dataset([[0, 1]], {"a": 2}), TypeError, "domain"),
    ("replace index", lambda: DATA.replace(3, [0, 0]), ValueError, "i must be in"),
    ("sample n=0", lambda: DATA.sample(0, rng=0), ValueError, "n must be"),
    ("correlated strength", lambda: dp.correlated_data(DOM, 10, rng=0, strength=1.5), ValueError, "strength"),
    ("independent concentration", lambda: dp.independent_data(DOM, 10, rng=0, concentration=0), ValueError, "concentration"),
    ("adult unknown preset", lambda: dp.load_adult("everything"), ValueError, "preset"),
    # accounting and theory
    ("advanced composition k=0", lambda: privacy.advanced_composition(0.1, 0, 1e-6), ValueError, "k must be"),
    ("advanced step eps>1", lambda: privacy.advanced_composition_step(2.0, 10, 1e-6), ValueError, "epsilon"),
    ("budget charge negative", lambda: dp.PrivacyBudget(1.0).charge(-0.1), ValueError, "epsilon"),
    ("zcdp budget rho=0", lambda: dp.ZCDPBudget(0.0), ValueError, "rho"),
    ("theory beta=1", lambda: theory.laplace_max_error(10, 100, 1.0, beta=1.0), ValueError, "beta"),
    ("theory n=0", lambda: theory.gaussian_max_error(10, 0, 1.0, 1e-6), ValueError, "n must be"),
    ("theory k=2.0", lambda: theory.laplace_max_error(2.0, 100, 1.0), TypeError, "k must be"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "call", "error", "match"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_refused_with_a_clear_message(name, call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_there_are_many_distinct_cases():
    assert len({c[0] for c in CASES}) == len(CASES) >= 40
