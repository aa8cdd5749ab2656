# ruff: noqa: E501  (a table of one-line cases reads best unwrapped)
"""Further unusual but plausible calls over the modules of issue 26 (chapters 02, 03, 05 and
the core they use), in the style of ``test_hardening.py``.

``CASES`` rows are ``(name, call, expected)``: ``expected`` is an exception class with a
regular expression its message must match (naming the parameter, or the limit), or a predicate
on the returned value. Before the fixes of issue 26, the calls counted in the issue's report
raised the wrong exception, an unhelpful message, returned a wrong or silent result, or hung.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpteach as dp
from dpteach import (
    _noise,
    adaptive,
    audit,
    growing,
    iterative,
    median,
    mw,
    privacy,
    projection,
    smalldb,
    streams,
    theory,
)

DOM = dp.Domain({"a": 2, "b": 2})
DATA = dp.Dataset([[0, 1], [1, 0], [1, 1], [0, 0]] * 5, DOM)  # n = 20
P = DATA.histogram()
Q = dp.MarginalWorkload.all_kway(DOM, 1)
Q2 = dp.MarginalWorkload.all_kway(DOM, 2)
W = dp.MatrixWorkload(np.eye(2))
STREAM = streams.DatabaseStream([[0, 1], [1, 0], [1, 1], [0, 0]] * 10, DOM, n0=8)
COUNTS = np.array([5.0, 3.0, 2.0, 10.0])
CANDIDATES = median.small_databases(4, 2)
QUERY = np.array([1.0, 0.0, 1.0, 0.0])


def raises(error, match):
    return (error, match)


def ok(predicate=lambda r: True):
    return predicate


def finite(r):
    return bool(np.all(np.isfinite(np.asarray(r, dtype=float))))


def is_histogram(r):
    r = np.asarray(r, dtype=float)
    return bool(np.all(r >= 0) and abs(r.sum() - 1) < 1e-9)


def _charged_then(run, budget):
    """``run(budget)``, then what the budget spent (a refused run must have spent nothing)."""
    try:
        run(budget)
    except (ValueError, TypeError, dp.BudgetExceededError):
        pass
    return budget.ledger


def _pmwg(**kw):
    return growing.PMWG(STREAM, **({"epsilon": 1.0, "alpha": 0.3, "rng": 0} | kw))


def _pmwg_answer(q, **kw):
    return _pmwg(**kw).answer(q)


def _online(**kw):
    return mw.OnlinePMW(DATA, **({"epsilon": 1.0, "alpha": 0.3, "rng": 0} | kw))


def _ic(**kw):
    dua = kw.pop("dua", iterative.MultiplicativeWeightsDUA(4, alpha=0.2))
    args = {"alpha": 0.4, "epsilon": 1.0, "rng": 0} | kw
    return iterative.iterative_construction(DATA, Q, dua, **args)


def _sdb(**kw):
    return smalldb.smalldb(DATA, Q, **({"epsilon": 1.0, "alpha": 0.5, "rng": 0} | kw))


def _sched(**kw):
    args = {"epsilon": 1.0, "gamma": 1.0, "rng": 0} | kw
    box = args.pop("box", growing.LaplaceBox())
    return growing.bb_scheduler(STREAM, box, Q, **args)


def _impr(**kw):
    args = {"epsilon": 1.0, "delta": 1e-6, "rng": 0, "release_times": [10]} | kw
    box = args.pop("box", growing.LaplaceBox())
    return growing.bb_improver(STREAM, box, Q, **args)


CASES = [
    # --- smalldb -------------------------------------------------------------------------------
    (
        "smalldb zcdp eps 4",
        lambda: _charged_then(lambda b: _sdb(epsilon=4.0, budget=b), dp.ZCDPBudget(100)),
        ok(lambda led: led[0][1] == 8.0),
    ),
    (
        "smalldb zcdp eps 1",
        lambda: _charged_then(lambda b: _sdb(epsilon=1.0, budget=b), dp.ZCDPBudget(100)),
        ok(lambda led: led[0][1] == 0.5),
    ),
    ("smalldb budget string", lambda: _sdb(budget="abc"), raises(TypeError, "budget must be")),
    (
        "smalldb budget a dict",
        lambda: _sdb(budget={"epsilon": 1}),
        raises(TypeError, "budget must be"),
    ),
    ("smalldb eps 1e-13", lambda: _sdb(epsilon=1e-13), ok(lambda r: is_histogram(r.synthetic))),
    ("smalldb eps 5e-324", lambda: _sdb(epsilon=5e-324), ok(lambda r: is_histogram(r.synthetic))),
    ("smalldb eps 1e300", lambda: _sdb(epsilon=1e300), ok(lambda r: is_histogram(r.synthetic))),
    (
        "smalldb eps inf",
        lambda: _sdb(epsilon=math.inf),
        raises(ValueError, "epsilon must be finite"),
    ),
    ("smalldb eps True", lambda: _sdb(epsilon=True), raises(TypeError, "epsilon must be a real")),
    ("smalldb alpha string", lambda: _sdb(alpha="0.5"), raises(TypeError, "alpha must be a real")),
    ("smalldb alpha 1", lambda: _sdb(alpha=1.0), raises(ValueError, "alpha must be in")),
    (
        "smalldb alpha tiny binary 30",
        lambda: smalldb.smalldb(
            dp.Dataset([[0] * 30], dp.Domain.binary(30)),
            dp.MarginalWorkload.all_kway(dp.Domain.binary(30), 1),
            epsilon=1.0,
            alpha=1e-3,
            rng=0,
        ),
        raises(ValueError, r"about 10\^"),
    ),
    (
        "smalldb alpha 0.064 binary 30",
        lambda: smalldb.smalldb(
            dp.Dataset([[0] * 30], dp.Domain.binary(30)),
            dp.MarginalWorkload.all_kway(dp.Domain.binary(30), 1),
            epsilon=1.0,
            alpha=0.064,
            rng=0,
        ),
        raises(ValueError, r"10\^"),
    ),
    ("smalldb m huge", lambda: _sdb(m=10**9), raises(ValueError, r"about 10\^")),
    ("smalldb m numpy int", lambda: _sdb(m=np.int64(2)), ok(lambda r: r.info["m"] == 2)),
    ("smalldb m float", lambda: _sdb(m=2.0), raises(TypeError, "m must be an integer")),
    (
        "smalldb refused charges nothing",
        lambda: _charged_then(lambda b: _sdb(alpha=0.01, budget=b), dp.PrivacyBudget(1)),
        ok(lambda led: led == []),
    ),
    (
        "smalldb data a histogram",
        lambda: smalldb.smalldb(P, Q, epsilon=1.0, alpha=0.5, rng=0),
        raises(TypeError, "data must be a dpteach.Dataset"),
    ),
    (
        "smalldb workload a matrix",
        lambda: smalldb.smalldb(DATA, np.eye(4), epsilon=1.0, alpha=0.5, rng=0),
        raises(TypeError, "workload must be"),
    ),
    ("smalldb rng None", lambda: _sdb(rng=None), raises(TypeError, "rng must be")),
    (
        "smalldb audit sampler",
        lambda: smalldb.audit_sampler(Q, epsilon=1.0, alpha=0.5)(DATA, np.random.default_rng(0), 3),
        ok(lambda r: len(r) == 3),
    ),
    # --- median ---------------------------------------------------------------------------------
    (
        "multiset_count huge",
        lambda: median.multiset_count(2**30, 10**6),
        raises(ValueError, "log_multiset_count"),
    ),
    ("multiset_count small", lambda: median.multiset_count(4, 5), ok(lambda r: r == 56)),
    (
        "multiset_count domain 0",
        lambda: median.multiset_count(0, 5),
        raises(ValueError, "domain_size must be >= 1"),
    ),
    (
        "multiset_count m float",
        lambda: median.multiset_count(4, 2.5),
        raises(TypeError, "m must be an integer"),
    ),
    (
        "log_multiset_count 1 cell",
        lambda: median.log_multiset_count(1, 10**9),
        ok(lambda r: abs(r) < 1e-6),
    ),
    (
        "small_databases too many",
        lambda: median.small_databases(10**6, 3),
        raises(ValueError, "more than the limit"),
    ),
    (
        "small_databases 1 cell",
        lambda: median.small_databases(1, 3),
        ok(lambda r: r.tolist() == [[1.0]]),
    ),
    ("check_candidates ok", lambda: median.check_candidates(4, 2), ok(lambda r: r == 10)),
    (
        "median mechanism negative candidates",
        lambda: median.MedianMechanism(COUNTS, candidates=-np.eye(4), eta=0.2),
        raises(ValueError, "normalised histograms"),
    ),
    (
        "median mechanism rows not summing to 1",
        lambda: median.MedianMechanism(COUNTS, candidates=np.ones((2, 4)), eta=0.2),
        raises(ValueError, "normalised histograms"),
    ),
    (
        "median mechanism wrong width",
        lambda: median.MedianMechanism(COUNTS, candidates=np.eye(3), eta=0.2),
        raises(ValueError, "4 columns"),
    ),
    (
        "median mechanism empty candidates",
        lambda: median.MedianMechanism(COUNTS, candidates=np.empty((0, 4)), eta=0.2),
        raises(ValueError, "non-empty"),
    ),
    (
        "median mechanism nan candidates",
        lambda: median.MedianMechanism(COUNTS, candidates=np.full((2, 4), np.nan), eta=0.2),
        raises(ValueError, "finite"),
    ),
    (
        "median mechanism string candidates",
        lambda: median.MedianMechanism(COUNTS, candidates=[["1", "0", "0", "0"]], eta=0.2),
        raises(TypeError, "candidates must be numeric"),
    ),
    (
        "median mechanism eta 0",
        lambda: median.MedianMechanism(COUNTS, candidates=CANDIDATES, eta=0.0),
        raises(ValueError, "eta must be > 0"),
    ),
    (
        "median mechanism answer",
        lambda: median.MedianMechanism(COUNTS, candidates=CANDIDATES, eta=0.3).answer(QUERY),
        ok(lambda r: 0 <= r <= 1),
    ),
    (
        "median mechanism query too long",
        lambda: median.MedianMechanism(COUNTS, candidates=CANDIDATES, eta=0.3).answer(np.ones(5)),
        raises(ValueError, "query must have length 4"),
    ),
    (
        "median mechanism query string",
        lambda: median.MedianMechanism(COUNTS, candidates=CANDIDATES, eta=0.3).answer("1010"),
        raises(TypeError, "query must be numeric"),
    ),
    (
        "halving dua negative",
        lambda: median.HalvingDUA(-np.ones((2, 3))),
        raises(ValueError, "normalised histograms"),
    ),
    (
        "halving dua update wrong length",
        lambda: median.HalvingDUA(CANDIDATES).update(np.ones(10, bool), np.ones(3), 0.5),
        raises(ValueError, "query must have length 4"),
    ),
    (
        "halving dua update out of range",
        lambda: median.HalvingDUA(CANDIDATES).update(np.ones(10, bool), np.full(4, 2.0), 0.5),
        raises(ValueError, "values in"),
    ),
    (
        "halving dua update ok",
        lambda: median.HalvingDUA(CANDIDATES).update(np.ones(10, bool), QUERY, 0.9),
        ok(lambda r: r.dtype == bool and 0 < r.sum() < 10),
    ),
    (
        "best_candidate wrong width",
        lambda: median.best_candidate(np.eye(4), np.ones((1, 3)), np.array([1, 1, 1])),
        raises(ValueError, "3 columns"),
    ),
    (
        "best_candidate query out of range",
        lambda: median.best_candidate(CANDIDATES, np.full((1, 4), 3.0), COUNTS),
        raises(ValueError, "values in"),
    ),
    (
        "best_candidate ok",
        lambda: median.best_candidate(CANDIDATES, np.eye(4), COUNTS),
        ok(lambda r: 0 <= r[0] < 10 and r[1] >= 0),
    ),
    (
        "guess and check guess nan",
        lambda: median.GuessAndCheck(COUNTS, eta=0.2, m=2).ask(QUERY, math.nan),
        raises(ValueError, "guess must be finite"),
    ),
    (
        "guess and check guess 2",
        lambda: median.GuessAndCheck(COUNTS, eta=0.2, m=2).ask(QUERY, 2.0),
        raises(ValueError, "guess must be in"),
    ),
    (
        "guess and check sample fractional",
        lambda: median.GuessAndCheck([0.5, 0.5], eta=0.2, m=2),
        raises(ValueError, "integer counts"),
    ),
    (
        "private guess and check zcdp",
        lambda: _charged_then(
            lambda b: median.PrivateGuessAndCheck(
                COUNTS, eta=0.2, m=2, epsilon=2.0, rng=0, budget=b
            ),
            dp.ZCDPBudget(10),
        ),
        ok(lambda led: led[0][1] == 2.0),
    ),
    (
        "private guess and check tiny eps",
        lambda: _charged_then(
            lambda b: median.PrivateGuessAndCheck(
                COUNTS, eta=0.2, m=2, epsilon=1e-14, rng=0, budget=b
            ),
            dp.PrivacyBudget(1),
        ),
        ok(lambda led: led == []),
    ),
    (
        "private guess and check budget str",
        lambda: median.PrivateGuessAndCheck(COUNTS, eta=0.2, m=2, epsilon=1.0, rng=0, budget="x"),
        raises(TypeError, "budget must be"),
    ),
    # --- adaptive ---------------------------------------------------------------------------------
    (
        "interact no queries",
        lambda: adaptive.interact(adaptive.ExactAnswers(COUNTS), adaptive.fixed_queries([])).errors(
            P
        ),
        ok(lambda r: r.shape == (0,)),
    ),
    (
        "interact no queries bad p",
        lambda: adaptive.interact(adaptive.ExactAnswers(COUNTS), adaptive.fixed_queries([])).errors(
            [0.5, 0.6]
        ),
        raises(ValueError, "p must sum to 1"),
    ),
    (
        "interact one query",
        lambda: adaptive.interact(
            adaptive.ExactAnswers(COUNTS), adaptive.fixed_queries([QUERY])
        ).errors(COUNTS / COUNTS.sum()),
        ok(lambda r: r.shape == (1,) and r[0] < 1e-12),
    ),
    (
        "agreement lengths differ",
        lambda: adaptive.agreement(np.ones(3), np.ones(4)),
        raises(ValueError, "feature and label"),
    ),
    (
        "agreement strings",
        lambda: adaptive.agreement(["1", "0"], [1, 0]),
        raises(TypeError, "feature must be numeric"),
    ),
    (
        "agreement 2-d",
        lambda: adaptive.agreement(np.ones((2, 2)), np.ones((2, 2))),
        raises(ValueError, "feature must be 1-dimensional"),
    ),
    (
        "agreement ok",
        lambda: adaptive.agreement([1, 0, 1], [1, 1, 1]),
        ok(lambda r: r.tolist() == [1.0, 0.0, 1.0]),
    ),
    (
        "laplace answers epsilon 0",
        lambda: adaptive.LaplaceAnswers(COUNTS, epsilon=0.0, rng=0),
        raises(ValueError, "epsilon must be > 0"),
    ),
    ("fresh samples n 0", lambda: adaptive.FreshSamples(P, 0, rng=0), raises(ValueError, "n")),
    # --- projection ------------------------------------------------------------------------------
    (
        "simplex 1e16",
        lambda: projection.simplex_projection([1e16, 0.0]),
        ok(lambda r: r.tolist() == [1.0, 0.0]),
    ),
    (
        "simplex 1e300",
        lambda: projection.simplex_projection([1e300] * 3),
        ok(lambda r: np.allclose(r, 1 / 3)),
    ),
    (
        "simplex -1e300",
        lambda: projection.simplex_projection([-1e300, -1e300]),
        ok(lambda r: np.allclose(r, 0.5)),
    ),
    (
        "simplex 1.7e308",
        lambda: projection.simplex_projection([1.7e308, -1.7e308]),
        ok(lambda r: r.tolist() == [1.0, 0.0]),
    ),
    (
        "simplex one entry",
        lambda: projection.simplex_projection([42.0]),
        ok(lambda r: r.tolist() == [1.0]),
    ),
    (
        "simplex empty",
        lambda: projection.simplex_projection([]),
        raises(ValueError, "v must not be empty"),
    ),
    (
        "simplex nan",
        lambda: projection.simplex_projection([np.nan, 1.0]),
        raises(ValueError, "v must contain only finite"),
    ),
    (
        "simplex strings",
        lambda: projection.simplex_projection(["1", "0"]),
        raises(TypeError, "v must be numeric"),
    ),
    (
        "simplex 2-d",
        lambda: projection.simplex_projection(np.eye(2)),
        raises(ValueError, "v must be 1-dimensional"),
    ),
    (
        "project 1e200",
        lambda: projection.project([1e200, 1e200], W).histogram,
        ok(lambda r: np.allclose(r, 0.5)),
    ),
    ("project -1e200", lambda: projection.project([-1e200, 0.0], W).histogram, ok(is_histogram)),
    (
        "project wrong length",
        lambda: projection.project([0.5, 0.5, 0.5], W),
        raises(ValueError, "y"),
    ),
    (
        "gaussian width huge samples",
        lambda: projection.gaussian_width(W, samples=10**9, rng=0),
        raises(ValueError, "samples x k"),
    ),
    (
        "gaussian width samples 1",
        lambda: projection.gaussian_width(W, samples=1, rng=0),
        raises(ValueError, "samples must be >= 2"),
    ),
    (
        "gaussian width ok",
        lambda: projection.gaussian_width(W, samples=50, rng=0).gaussian_width,
        ok(lambda r: 0 < r < 2),
    ),
    (
        "gaussian width confidence 1",
        lambda: projection.gaussian_width(W, samples=50, rng=0, confidence=1.0),
        raises(ValueError, "confidence must be in"),
    ),
    (
        "projection mechanism zcdp",
        lambda: _charged_then(
            lambda b: projection.projection_mechanism(
                DATA, Q, epsilon=1.0, delta=1e-6, rng=0, budget=b
            ),
            dp.ZCDPBudget(10),
        ),
        ok(lambda led: len(led) == 1 and 0 < led[0][1] < 10),
    ),
    (
        "projection mechanism budget str",
        lambda: projection.projection_mechanism(
            DATA, Q, epsilon=1.0, delta=1e-6, rng=0, budget="b"
        ),
        raises(TypeError, "budget must be"),
    ),
    (
        "projection mechanism delta 0",
        lambda: projection.projection_mechanism(DATA, Q, epsilon=1.0, delta=0.0, rng=0),
        raises(ValueError, "delta"),
    ),
    # --- growing ---------------------------------------------------------------------------------
    (
        "epochs gamma 1e-20",
        lambda: growing.epochs(10, 1e-20, 12),
        raises(ValueError, "gamma=1e-20 is too small"),
    ),
    (
        "epochs gamma 1e-300",
        lambda: growing.epochs(10, 1e-300, 12),
        raises(ValueError, "gamma=1e-300 is too small"),
    ),
    (
        "epochs gamma 1e-15",
        lambda: growing.epochs(10, 1e-15, 12)[1],
        ok(lambda r: r.tolist() == [10, 11, 12]),
    ),
    (
        "epochs gamma huge",
        lambda: growing.epochs(10, 1e300, 10**6)[1],
        ok(lambda r: r.tolist() == [10]),
    ),
    (
        "epochs horizon below n0",
        lambda: growing.epochs(10, 0.5, 5),
        raises(ValueError, "horizon must be >= 10"),
    ),
    (
        "epochs gamma nan",
        lambda: growing.epochs(10, math.nan, 12),
        raises(ValueError, "gamma must be finite"),
    ),
    ("scheduler gamma 1e-20", lambda: _sched(gamma=1e-20), raises(ValueError, "gamma")),
    (
        "scheduler smalldb box refuses first",
        lambda: _charged_then(
            lambda b: _sched(box=growing.SmallDBBox(alpha=0.01), budget=b), dp.PrivacyBudget(1)
        ),
        ok(lambda led: led == []),
    ),
    (
        "improver smalldb box refuses first",
        lambda: _charged_then(
            lambda b: _impr(box=growing.SmallDBBox(alpha=0.01), budget=b), dp.ZCDPBudget(1)
        ),
        ok(lambda led: led == []),
    ),
    (
        "scheduler laplace box tiny eps refuses first",
        lambda: _charged_then(lambda b: _sched(epsilon=1e-300, budget=b), dp.PrivacyBudget(1)),
        ok(lambda led: led == []),
    ),
    (
        "scheduler zcdp budget pure schedule",
        lambda: _sched(budget=dp.ZCDPBudget(10)).info["budget"].spent,
        ok(lambda r: r > 0),
    ),
    (
        "scheduler privacy budget zcdp schedule",
        lambda: _sched(schedule="zcdp", budget=dp.PrivacyBudget(10)).info["budget"].spent_epsilon,
        ok(lambda r: r > 0),
    ),
    ("scheduler budget string", lambda: _sched(budget="x"), raises(TypeError, "budget must be")),
    (
        "scheduler schedule unknown",
        lambda: _sched(schedule="fast"),
        raises(ValueError, "schedule must be one of"),
    ),
    (
        "scheduler user box no check",
        lambda: _sched(box=lambda data, workload, **kw: np.zeros(workload.k)).trace,
        ok(lambda r: len(r) >= 1),
    ),
    (
        "scheduler box not callable",
        lambda: _sched(box=3),
        raises(TypeError, "blackbox must be callable"),
    ),
    (
        "improver privacy budget",
        lambda: _impr(budget=dp.PrivacyBudget(100)).info["budget"].spent_epsilon,
        ok(lambda r: r > 0),
    ),
    ("improver c 0.5", lambda: _impr(c=0.5), raises(ValueError, "c must be in")),
    (
        "improver release time outside",
        lambda: _impr(release_times=[1000]),
        raises(ValueError, "release_times must lie in"),
    ),
    (
        "pmwg scale 1e13",
        lambda: _pmwg_answer(np.eye(4)[0], scale=1e13),
        raises(ValueError, "choose a smaller scale"),
    ),
    (
        "pmwg scale 1e13 charges nothing",
        lambda: _charged_then(
            lambda b: _pmwg_answer(np.eye(4)[0], scale=1e13, budget=b), dp.PrivacyBudget(1)
        ),
        ok(lambda led: led == []),
    ),
    (
        "pmwg zcdp budget",
        lambda: _pmwg_answer(np.eye(4)[0], scale=2.0, budget=dp.ZCDPBudget(1)),
        ok(finite),
    ),
    ("pmwg budget string", lambda: _pmwg(budget="x"), raises(TypeError, "budget must be")),
    (
        "pmwg query wrong length",
        lambda: _pmwg_answer(np.ones(3)),
        raises(ValueError, "q must have length 4"),
    ),
    ("pmwg query string", lambda: _pmwg_answer("0101"), raises(TypeError, "q must be numeric")),
    ("pmwg query above 1", lambda: _pmwg_answer(np.full(4, 2.0)), raises(ValueError, "entries in")),
    ("pmwg alpha 1", lambda: _pmwg(alpha=1.0), raises(ValueError, "alpha must be in")),
    ("pmwg scale 0", lambda: _pmwg(scale=0.0), raises(ValueError, "scale must be > 0")),
    ("pmwg advance back", lambda: _pmwg().advance(3), raises(ValueError, "t must be >= 8")),
    ("pmwg advance beyond", lambda: _pmwg().advance(10**6), raises(ValueError, "horizon")),
    (
        "pmwg track arrivals 0",
        lambda: _pmwg(track_arrivals=0),
        raises(ValueError, "track_arrivals must be >= 1"),
    ),
    (
        "pmwg column unknown",
        lambda: _pmwg().column("nope"),
        raises(ValueError, "name must be a field"),
    ),
    (
        "smalldbg alpha tiny",
        lambda: growing.smalldbg(STREAM, Q, epsilon=1.0, gamma=1.0, alpha=0.01, rng=0),
        raises(ValueError, "SmallDB cannot enumerate"),
    ),
    (
        "adapter check ok",
        lambda: growing.PrivateMWBox().check(DATA, Q, epsilon=1.0, beta=0.05),
        ok(lambda r: r is None),
    ),
    (
        "adapter check smalldb",
        lambda: growing.SmallDBBox(alpha=0.01).check(DATA, Q, epsilon=1.0, beta=0.05),
        raises(ValueError, "SmallDB cannot enumerate"),
    ),
    # --- _noise and mechanisms -------------------------------------------------------------------
    (
        "exponential eps 1e-13",
        lambda: dp.exponential([0.0, 1.0], sensitivity=1.0, epsilon=1e-13, rng=0),
        ok(lambda r: r in (0, 1)),
    ),
    (
        "exponential eps 5e-324",
        lambda: dp.exponential([0.0, 1.0], sensitivity=1.0, epsilon=5e-324, rng=0),
        ok(lambda r: r in (0, 1)),
    ),
    (
        "exponential eps 1e-13 huge scores",
        lambda: dp.exponential([0.0, 1e300], sensitivity=1.0, epsilon=1e-13, rng=0),
        ok(lambda r: r in (0, 1)),
    ),
    (
        "exponential eps 1e-13 size",
        lambda: dp.exponential([0.0, 1.0], sensitivity=1.0, epsilon=1e-13, rng=0, size=5),
        ok(lambda r: r.shape == (5,)),
    ),
    (
        "exp grid gaps tiny eps",
        lambda: _noise.exp_grid(1.0, 1e-13).gaps(np.array([0.0, 1.0, 2.0])),
        ok(lambda r: len(r) == 3 and r[2] == 0),
    ),
    (
        "exponential strings",
        lambda: dp.exponential(["1", "2"], sensitivity=1.0, epsilon=1.0, rng=0),
        raises(TypeError, "scores must be numeric"),
    ),
    (
        "exponential None score",
        lambda: dp.exponential([1.0, None], sensitivity=1.0, epsilon=1.0, rng=0),
        raises(TypeError, "scores must be numeric"),
    ),
    (
        "exponential zcdp",
        lambda: _charged_then(
            lambda b: dp.exponential([0.0, 1.0], sensitivity=1.0, epsilon=3.0, rng=0, budget=b),
            dp.ZCDPBudget(10),
        ),
        ok(lambda led: led[0][1] == 4.5),
    ),
    (
        "distinguisher eps 1e-13",
        lambda: iterative.exponential_distinguisher(
            np.zeros(3), np.ones(3), n=5, epsilon=1e-13, rng=0
        ),
        ok(lambda r: r in (0, 1, 2)),
    ),
    (
        "laplace string",
        lambda: dp.laplace("3", sensitivity=1.0, epsilon=1.0, rng=0),
        raises(TypeError, "value must be numeric"),
    ),
    (
        "laplace bytes",
        lambda: dp.laplace(b"3", sensitivity=1.0, epsilon=1.0, rng=0),
        raises(TypeError, "value must be numeric"),
    ),
    (
        "laplace None",
        lambda: dp.laplace(None, sensitivity=1.0, epsilon=1.0, rng=0),
        raises(TypeError, "not strings or None"),
    ),
    (
        "laplace list with None",
        lambda: dp.laplace([1.0, None], sensitivity=1.0, epsilon=1.0, rng=0),
        raises(TypeError, "value must be numeric"),
    ),
    (
        "laplace string list",
        lambda: dp.laplace(["1", "2"], sensitivity=1.0, epsilon=1.0, rng=0),
        raises(TypeError, "value must be numeric"),
    ),
    ("laplace True", lambda: dp.laplace(True, sensitivity=1.0, epsilon=1.0, rng=0), ok(finite)),
    (
        "laplace bool array",
        lambda: dp.laplace(np.array([True, False]), sensitivity=1.0, epsilon=1.0, rng=0),
        ok(lambda r: r.shape == (2,)),
    ),
    (
        "laplace object ints",
        lambda: dp.laplace(np.array([1, 2], dtype=object), sensitivity=1.0, epsilon=1.0, rng=0),
        ok(lambda r: r.shape == (2,)),
    ),
    (
        "laplace string refused charges nothing",
        lambda: _charged_then(
            lambda b: dp.laplace("3", sensitivity=1.0, epsilon=1.0, rng=0, budget=b),
            dp.PrivacyBudget(1),
        ),
        ok(lambda led: led == []),
    ),
    (
        "gaussian string",
        lambda: dp.gaussian("1", sensitivity=1.0, epsilon=1.0, delta=1e-6, rng=0),
        raises(TypeError, "value must be numeric"),
    ),
    (
        "sparse test string",
        lambda: dp.AboveThreshold(0.5, sensitivity=1.0, epsilon=1.0, rng=0).test("1"),
        raises(TypeError, "value must be a real"),
    ),
    (
        "sparse zcdp approx",
        lambda: _charged_then(
            lambda b: dp.Sparse(0.5, sensitivity=1.0, epsilon=1.0, rng=0, delta=1e-6, budget=b),
            dp.ZCDPBudget(10),
        ),
        ok(lambda led: led == []),
    ),
    # --- audit ---------------------------------------------------------------------------------
    ("encode 1.7", lambda: audit.encode([1.7]), raises(ValueError, "integers in -50..49")),
    ("encode 100", lambda: audit.encode([100]), raises(ValueError, "clip=True")),
    ("encode -51", lambda: audit.encode([-51]), raises(ValueError, "clip=True")),
    ("encode nan", lambda: audit.encode([math.nan]), raises(ValueError, "integers")),
    ("encode inf", lambda: audit.encode([math.inf]), raises(ValueError, "integers")),
    ("encode string", lambda: audit.encode("12"), raises(TypeError, "values must be a sequence")),
    ("encode string element", lambda: audit.encode(["1"]), raises(ValueError, "integers")),
    ("encode clip", lambda: audit.encode([100], clip=True), ok(lambda r: r == audit.encode([49]))),
    ("encode 3.0", lambda: audit.encode([3.0]), ok(lambda r: r == audit.encode([3]))),
    ("encode numpy int", lambda: audit.encode([np.int64(-50), None]), ok(lambda r: r == 100)),
    (
        "encode one to one",
        lambda: len(
            {audit.encode([a, b]) for a in range(-50, 50) for b in [None, *range(-50, 50)]}
        ),
        ok(lambda r: r == 100 * 101),
    ),
    (
        "encode clip not bool",
        lambda: audit.encode([1], clip=1),
        raises(TypeError, "clip must be True or False"),
    ),
    # --- queries ---------------------------------------------------------------------------------
    ("marginal query cell 5", lambda: Q.marginal_query(0, [5]), raises(ValueError, r"a in 0..1")),
    (
        "marginal query short cell",
        lambda: Q2.marginal_query(0, [1]),
        raises(ValueError, "one value per attribute"),
    ),
    (
        "marginal query long cell",
        lambda: Q.marginal_query(0, [1, 1]),
        raises(ValueError, "one value per attribute"),
    ),
    (
        "marginal query negative cell",
        lambda: Q.marginal_query(0, [-1]),
        raises(ValueError, r"a in 0..1"),
    ),
    (
        "marginal query float cell",
        lambda: Q.marginal_query(0, [0.5]),
        raises(TypeError, "cell must be a sequence of integers"),
    ),
    (
        "marginal query string cell",
        lambda: Q.marginal_query(0, "1"),
        raises(TypeError, "cell must be a sequence of integers"),
    ),
    (
        "marginal query m 2",
        lambda: Q.marginal_query(2, [0]),
        raises(ValueError, "marginal index m must be in 0..1"),
    ),
    (
        "marginal query m -1",
        lambda: Q.marginal_query(-1, [0]),
        raises(ValueError, "m must be >= 0"),
    ),
    (
        "marginal query ok",
        lambda: Q2.marginal_query(0, [1, 0]),
        ok(lambda r: r.tolist() == [0, 0, 1, 0]),
    ),
    (
        "marginal query numpy cell",
        lambda: Q.marginal_query(np.int64(1), np.array([1])),
        ok(lambda r: r.tolist() == [0, 1, 0, 1]),
    ),
    ("marginal slice -1", lambda: Q.marginal_slice(-1), raises(ValueError, "m must be >= 0")),
    (
        "marginal slice 2",
        lambda: Q.marginal_slice(2),
        raises(ValueError, "marginal index m must be in 0..1"),
    ),
    (
        "marginal slice float",
        lambda: Q.marginal_slice(1.0),
        raises(TypeError, "m must be an integer"),
    ),
    ("marginal slice ok", lambda: Q.marginal_slice(1), ok(lambda r: r == slice(2, 4))),
    (
        "matrix workload strings",
        lambda: dp.MatrixWorkload([["0.5", "1"]]),
        raises(TypeError, "matrix must be numeric"),
    ),
    (
        "matrix workload None",
        lambda: dp.MatrixWorkload([[None, 1]]),
        raises(TypeError, "matrix must be numeric"),
    ),
    (
        "answer strings",
        lambda: Q.answer([str(x) for x in P]),
        raises(TypeError, "p must be numeric"),
    ),
    (
        "answer bytes array",
        lambda: Q.answer(np.array([b"0.25"] * 4)),
        raises(TypeError, "p must be numeric"),
    ),
    (
        "answer bool histogram",
        lambda: Q.answer(np.array([True, False, False, False])),
        ok(lambda r: r.tolist() == [1.0, 0.0, 1.0, 0.0]),
    ),
    # --- data and domain --------------------------------------------------------------------------
    (
        "dataset inf",
        lambda: dp.Dataset([[math.inf, 0]], DOM),
        raises(ValueError, r"records\[0, 0\] = inf"),
    ),
    (
        "dataset 1e20",
        lambda: dp.Dataset([[1e20, 0]], DOM),
        raises(ValueError, r"= 1e\+20 is outside"),
    ),
    (
        "dataset -inf",
        lambda: dp.Dataset([[0, -math.inf]], DOM),
        raises(ValueError, r"records\[0, 1\] = -inf"),
    ),
    (
        "dataset uint64 max",
        lambda: dp.Dataset(np.array([[2**64 - 1, 0]], dtype=np.uint64), DOM),
        raises(ValueError, "= 18446744073709551615"),
    ),
    (
        "dataset int8 -1",
        lambda: dp.Dataset(np.array([[0, -1]], dtype=np.int8), DOM),
        raises(ValueError, r"records\[0, 1\] = -1"),
    ),
    (
        "dataset ragged",
        lambda: dp.Dataset([[0, 1], [1]], DOM),
        raises(ValueError, "rows have different lengths"),
    ),
    (
        "dataset nan",
        lambda: dp.Dataset([[math.nan, 0]], DOM),
        raises(TypeError, "integer attribute values"),
    ),
    (
        "dataset 1.5",
        lambda: dp.Dataset([[1.5, 0]], DOM),
        raises(TypeError, "integer attribute values"),
    ),
    (
        "dataset float ints",
        lambda: dp.Dataset([[1.0, 0.0]], DOM).records.tolist(),
        ok(lambda r: r == [[1, 0]]),
    ),
    (
        "dataset uint8",
        lambda: dp.Dataset(np.array([[1, 1]], dtype=np.uint8), DOM).n,
        ok(lambda r: r == 1),
    ),
    ("dataset strings", lambda: dp.Dataset([["0", "1"]], DOM), raises(TypeError, "integer")),
    (
        "domain huge check dense short",
        lambda: dp.Domain.binary(15000).check_dense(),
        raises(ValueError, r"the universe of 15000 attributes needs about 10\^4515 cells"),
    ),
    (
        "domain 64 binary check dense",
        lambda: dp.Domain.binary(64).check_dense(),
        raises(ValueError, r"about 10\^19 cells"),
    ),
    ("domain check dense small", lambda: DOM.check_dense(), ok(lambda r: r is None)),
    (
        "from histogram strings",
        lambda: dp.from_histogram(["0.5", "0.5"], dp.Domain({"a": 2}), 10, rng=0),
        raises(TypeError, "numeric"),
    ),
    # --- privacy ---------------------------------------------------------------------------------
    (
        "charge_pure 1e200",
        lambda: dp.ZCDPBudget(1.0).charge_pure(1e200),
        raises(ValueError, "epsilon=1e\\+200 is too large"),
    ),
    (
        "charge_pure -1",
        lambda: dp.ZCDPBudget(1.0).charge_pure(-1.0),
        raises(ValueError, "epsilon must be >= 0"),
    ),
    (
        "charge a string budget",
        lambda: privacy.charge("b", 1.0, label="x"),
        raises(TypeError, "budget must be a PrivacyBudget, a ZCDPBudget or None"),
    ),
    (
        "charge approx to zcdp",
        lambda: privacy.charge(dp.ZCDPBudget(1), 0.1, 1e-6, label="step"),
        raises(TypeError, "no zCDP guarantee"),
    ),
    ("cost zcdp pure", lambda: privacy.cost(dp.ZCDPBudget(1), 2.0), ok(lambda r: r == 2.0)),
    ("cost none", lambda: privacy.cost(None, 2.0), ok(lambda r: r == 0.0)),
    (
        "can_afford zcdp",
        lambda: privacy.can_afford(dp.ZCDPBudget(1), 2.0),
        ok(lambda r: r is False),
    ),
    (
        "can_afford privacy",
        lambda: privacy.can_afford(dp.PrivacyBudget(1), 0.5),
        ok(lambda r: r is True),
    ),
    ("check_budget int", lambda: privacy.check_budget(3), raises(TypeError, "budget must be")),
    (
        "basic composition vacuous",
        lambda: pytest.warns(
            privacy.VacuousGuaranteeWarning, privacy.basic_composition, [1, 1], [0.5, 0.5]
        ),
        ok(lambda r: r == (2.0, 1.0)),
    ),
    (
        "advanced composition vacuous",
        lambda: pytest.warns(
            privacy.VacuousGuaranteeWarning, privacy.advanced_composition, 0.1, 10**7, 1e-6, 1e-6
        )[1],
        ok(lambda r: r == 1.0),
    ),
    (
        "basic composition fine",
        lambda: privacy.basic_composition([1, 1], [0.1, 0.1]),
        ok(lambda r: r[1] == pytest.approx(0.2)),
    ),
    # --- iterative ----------------------------------------------------------------------------
    (
        "ic alpha 1e-3",
        lambda: _ic(alpha=1e-3, dua=iterative.MultiplicativeWeightsDUA(4, alpha=5e-4)),
        raises(ValueError, "max_rounds"),
    ),
    (
        "ic alpha 1e-3 charges nothing",
        lambda: _charged_then(
            lambda b: _ic(
                alpha=1e-3, dua=iterative.MultiplicativeWeightsDUA(4, alpha=5e-4), budget=b
            ),
            dp.PrivacyBudget(1),
        ),
        ok(lambda led: led == []),
    ),
    ("ic max_rounds opt in", lambda: _ic(max_rounds=10**6).trace, ok(lambda r: len(r) >= 1)),
    ("ic max_rounds 0", lambda: _ic(max_rounds=0), raises(ValueError, "max_rounds must be >= 1")),
    (
        "ic max_rounds float",
        lambda: _ic(max_rounds=1e6),
        raises(TypeError, "max_rounds must be an integer"),
    ),
    (
        "ic dua None",
        lambda: _ic(dua=None),
        raises(TypeError, "dua must be a database update algorithm"),
    ),
    (
        "ic dua a string",
        lambda: _ic(dua="mw"),
        raises(TypeError, "dua must be a database update algorithm"),
    ),
    (
        "ic dua a class",
        lambda: _ic(dua=iterative.MultiplicativeWeightsDUA),
        raises(TypeError, "dua must be"),
    ),
    ("ic zcdp budget", lambda: _ic(budget=dp.ZCDPBudget(10)).trace, ok(lambda r: len(r) >= 1)),
    (
        "ic zcdp approx",
        lambda: _charged_then(lambda b: _ic(delta=1e-6, budget=b), dp.ZCDPBudget(10)),
        ok(lambda led: led == []),
    ),
    ("ic budget str", lambda: _ic(budget="b"), raises(TypeError, "budget must be")),
    (
        "ic zcdp too small",
        lambda: _charged_then(lambda b: _ic(budget=b), dp.ZCDPBudget(1e-6)),
        ok(lambda led: led == []),
    ),
    (
        "ic halving dua",
        lambda: _ic(dua=median.HalvingDUA(CANDIDATES)).trace,
        ok(lambda r: len(r) >= 1),
    ),
    # --- mw --------------------------------------------------------------------------------------
    (
        "learn alpha 1e-6",
        lambda: mw.learn(P, Q, alpha=1e-6),
        raises(ValueError, "max_rounds=100,000"),
    ),
    ("learn alpha 1e-300", lambda: mw.learn(P, Q, alpha=1e-300), raises(ValueError, "max_rounds")),
    (
        "learn opt in",
        lambda: mw.learn(P, Q, alpha=0.01, max_rounds=10**6).trace[-1].max_error,
        ok(lambda r: r <= 0.01),
    ),
    (
        "learn max_rounds bool",
        lambda: mw.learn(P, Q, alpha=0.3, max_rounds=True),
        raises(TypeError, "max_rounds must be an integer"),
    ),
    (
        "private mw alpha 1e-4",
        lambda: mw.private_mw(DATA, Q, epsilon=1.0, alpha=1e-4, rng=0),
        raises(ValueError, "max_rounds"),
    ),
    (
        "private mw zcdp",
        lambda: _charged_then(
            lambda b: mw.private_mw(DATA, Q, epsilon=2.0, alpha=0.4, rng=0, budget=b),
            dp.ZCDPBudget(10),
        ),
        ok(lambda led: led[0][1] == 2.0),
    ),
    (
        "mwem zcdp",
        lambda: _charged_then(
            lambda b: mw.mwem(DATA, Q, epsilon=2.0, rounds=2, rng=0, budget=b), dp.ZCDPBudget(10)
        ),
        ok(lambda led: led[0][1] == 2.0),
    ),
    (
        "mwem budget str",
        lambda: mw.mwem(DATA, Q, epsilon=1.0, rounds=2, rng=0, budget="b"),
        raises(TypeError, "budget must be"),
    ),
    ("online pmw alpha 1e-6", lambda: _online(alpha=1e-6), raises(ValueError, "lower alpha=1e-06")),
    (
        "online pmw max_hard huge",
        lambda: _online(max_hard=10**15),
        raises(ValueError, "lower max_hard"),
    ),
    (
        "online pmw alpha 1e-6 charges nothing",
        lambda: _charged_then(lambda b: _online(alpha=1e-6, budget=b), dp.PrivacyBudget(10)),
        ok(lambda led: led == []),
    ),
    (
        "online pmw zcdp",
        lambda: _charged_then(lambda b: _online(epsilon=2.0, budget=b), dp.ZCDPBudget(10)),
        ok(lambda led: led[0][1] == 2.0),
    ),
    ("online pmw budget str", lambda: _online(budget="b"), raises(TypeError, "budget must be")),
    ("online pmw string query", lambda: _online().answer("0101"), raises(TypeError, "numeric")),
    # --- theory ----------------------------------------------------------------------------------
    (
        "smalldb candidates huge",
        lambda: theory.smalldb_candidates(2**30, 10**6),
        raises(ValueError, r"about 10\^3465393"),
    ),
    ("smalldb candidates small", lambda: theory.smalldb_candidates(3, 2), ok(lambda r: r == 6)),
    (
        "log smalldb candidates huge",
        lambda: theory.log_smalldb_candidates(2**30, 10**6),
        ok(lambda r: 7.9e6 < r < 8.0e6),
    ),
    (
        "smalldb max error huge universe",
        lambda: theory.smalldb_max_error(2**40, 10, 100, 1.0, 0.01),
        ok(lambda r: math.isfinite(r) and r > 1),
    ),
    (
        "smalldb max error matches count",
        lambda: theory.smalldb_max_error(4, 10, 100, 1.0, 0.5),
        ok(
            lambda r: (
                r
                == pytest.approx(
                    0.5
                    + 2
                    * math.log(theory.smalldb_candidates(4, theory.smalldb_size(10, 0.5)) / 0.05)
                    / 100
                )
            )
        ),
    ),
    (
        "smalldb candidates m 0",
        lambda: theory.smalldb_candidates(3, 0),
        raises(ValueError, "m must be >= 1"),
    ),
]


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
