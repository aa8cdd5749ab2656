# ruff: noqa: E501  (tables of one-line cases read best unwrapped)
"""Issue 26, the second hardening round: one regression test per numbered item.

The general rules (validate everything before the first charge, every charge through
:func:`dpteach.privacy.charge`, refusals change nothing) are tested over every budget-taking
mechanism in ``test_budget_charges.py``; ``test_unusual_calls.py`` holds the table of further
unusual calls. Calls that hung or ran for minutes before the fixes must now refuse or finish at
once (no wall-clock assertion: a hang would time the suite out).
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import dpteach as dp
from dpteach import (
    _validate,
    adaptive,
    audit,
    growing,
    iterative,
    median,
    mw,
    privacy,
    projection,
    smalldb,
    static,
    streams,
    theory,
    viz,
    widgets,
)

DOM = dp.Domain({"a": 2, "b": 2})
DATA = dp.Dataset([[0, 1], [1, 0], [1, 1], [0, 0]] * 5, DOM)
Q = dp.MarginalWorkload.all_kway(DOM, 1)
STREAM = streams.DatabaseStream([[0, 1], [1, 0], [1, 1], [0, 0]] * 10, DOM, n0=8)


# --- 1. SmallDB under zCDP --------------------------------------------------------------------


def test_item01_smalldb_charges_a_zcdp_budget_eps_squared_over_two():
    for epsilon in (4.0, 0.5):  # undercharged above 2, overcharged below before the fix
        budget = dp.ZCDPBudget(100)
        smalldb.smalldb(DATA, Q, epsilon=epsilon, alpha=0.5, rng=0, budget=budget)
        assert budget.spent == pytest.approx(epsilon**2 / 2)


def test_item01_smalldb_refuses_a_budget_that_is_not_one():
    with pytest.raises(TypeError, match="budget must be a PrivacyBudget, a ZCDPBudget or None"):
        smalldb.smalldb(DATA, Q, epsilon=1.0, alpha=0.5, rng=0, budget="abc")


# --- 2. the exponential mechanism at a tiny epsilon -------------------------------------------


@pytest.mark.parametrize("epsilon", [1e-13, 4e-13, 1e-200, 5e-324])
def test_item02_exponential_works_for_every_positive_epsilon(epsilon):
    choice = dp.exponential([0.0, 1.0], sensitivity=1.0, epsilon=epsilon, rng=0)
    assert choice in (0, 1)
    assert iterative.exponential_distinguisher(np.array([0.0, 1.0]), np.array([0.5, 0.5]), n=1,
                                               epsilon=epsilon, rng=0) in (0, 1)  # fmt: skip


def test_item02_a_tiny_epsilon_is_nearly_uniform_and_smalldb_charges_and_returns():
    draws = dp.exponential([0.0, 1e3], sensitivity=1.0, epsilon=1e-13, rng=0, size=4000)
    assert 0.45 < np.mean(draws) < 0.55  # 4000 fair coins: 0.5 +- 0.05 is 6 sigma
    budget = dp.PrivacyBudget(1.0)
    result = smalldb.smalldb(DATA, Q, epsilon=1e-13, alpha=0.5, rng=0, budget=budget)
    assert budget.spent_epsilon == 1e-13 and result.synthetic.sum() == pytest.approx(1)


# --- 3. SmallDB checks every limit before the charge ------------------------------------------


def test_item03_smalldb_with_a_raised_dense_limit_refuses_before_charging(monkeypatch):
    monkeypatch.setattr(_validate, "MAX_DENSE_SIZE", 2**40)
    monkeypatch.setattr(_validate, "MAX_BYTES", 2**50)
    big = dp.Domain.binary(6)  # |X| = 64
    data = dp.Dataset([[0] * 6, [1] * 6], big)
    budget = dp.PrivacyBudget(1.0)
    with pytest.raises(ValueError, match="MAX_CANDIDATE|more than the limit"):
        smalldb.smalldb(data, dp.MarginalWorkload.all_kway(big, 1), epsilon=0.5, alpha=0.5, m=4,
                        rng=0, budget=budget)  # fmt: skip
    assert budget.ledger == []


# --- 4. black boxes are checked before the first charge ---------------------------------------


@pytest.mark.parametrize("scheduler", ["bb_scheduler", "bb_improver"])
def test_item04_a_black_box_that_would_refuse_refuses_before_any_charge(scheduler):
    box = growing.SmallDBBox(alpha=0.01)  # m in the tens of thousands: too many candidates
    budget = dp.PrivacyBudget(1.0)
    kwargs = {"gamma": 1.0} if scheduler == "bb_scheduler" else {"delta": 1e-6}
    with pytest.raises(ValueError, match="SmallDB cannot enumerate"):
        getattr(growing, scheduler)(STREAM, box, Q, epsilon=1.0, rng=0, budget=budget, **kwargs)
    assert budget.ledger == []


def test_item04_the_adapters_check_is_a_dry_run_that_charges_and_draws_nothing():
    for box in (growing.LaplaceBox(), growing.PrivateMWBox(), growing.MWEMBox(rounds=2),
                growing.SmallDBBox(alpha=0.5)):  # fmt: skip
        box.check(DATA, Q, epsilon=1.0, beta=0.05)  # passes: nothing to refuse
    with pytest.raises(ValueError, match="epsilon"):
        growing.LaplaceBox().check(DATA, Q, epsilon=1e-300, beta=0.05)


# --- 5, 6. PMWG validates both grids before charging and stays usable ------------------------


def test_item05_pmwg_with_a_huge_scale_refuses_before_charging():
    budget = dp.PrivacyBudget(1.0)
    pmwg = growing.PMWG(STREAM, epsilon=1.0, alpha=0.3, rng=0, scale=1e13, budget=budget)
    with pytest.raises(ValueError, match="scale"):
        pmwg.answer(np.eye(4)[0])
    assert budget.ledger == [] and pmwg.instances == 0


def test_item06_pmwg_at_the_edge_of_the_grid_refuses_without_getting_stuck():
    """At scale 6.9e10 and t = 20 the instance's grid fits but the hard answer's does not.
    Before the fix: charged, ValueError, then ``RuntimeError: AboveThreshold has halted`` for
    every later query. Now every query is refused before any charge, with no instance left
    behind, and the object stays usable (here: it keeps refusing clearly)."""
    stream = streams.DatabaseStream([[0, 1]] * 40, DOM, n0=20)
    budget = dp.PrivacyBudget(1.0)
    pmwg = growing.PMWG(stream, epsilon=1.0, alpha=0.3, rng=0, scale=6.9e10, budget=budget)
    for q in np.eye(4):
        with pytest.raises(ValueError, match="nothing was charged or released"):
            pmwg.answer(q)
        assert budget.ledger == [] and pmwg._sparse is None and pmwg.instances == 0


def test_item06_pmwg_refuses_a_hard_answer_grid_before_the_test():
    """The instance started at t = 2 fits both grids; at t = 4000 the answer's does not: the
    query is refused before the test, so the instance has not halted and nothing was charged."""
    stream = streams.DatabaseStream([[0, 1]] * 4000, DOM, n0=2)
    budget = dp.PrivacyBudget(1.0)
    pmwg = growing.PMWG(stream, epsilon=1.0, alpha=0.3, rng=0, scale=2.0**36, budget=budget)
    pmwg.answer(np.zeros(4))  # starts an instance at t=2 (an easy query: 0 error)
    spent = list(budget.ledger)
    assert len(spent) == 1
    pmwg.advance(4000)
    with pytest.raises(ValueError, match="PMWG cannot answer at t=4000"):
        pmwg.answer(np.eye(4)[1])
    assert budget.ledger == spent and not pmwg._sparse.halted


# --- 7, 8. sizes estimated before computing, printed as 10^k ----------------------------------


def test_item07_huge_counts_are_estimated_not_computed():
    with pytest.raises(ValueError, match=r"about 10\^3465393"):
        theory.smalldb_candidates(2**30, 10**6)
    with pytest.raises(ValueError, match=r"log_multiset_count"):
        median.multiset_count(2**30, 10**6)
    assert median.log_multiset_count(2**30, 10**6) == pytest.approx(7979362.548, rel=1e-9)
    assert median.multiset_count(4, 5) == 56 == math.comb(8, 5)
    with pytest.raises(ValueError, match=r"10\^"):
        smalldb.smalldb(dp.Dataset([[0] * 30], dp.Domain.binary(30)),
                        dp.MarginalWorkload.all_kway(dp.Domain.binary(30), 1), epsilon=1.0,
                        alpha=1e-3, rng=0)  # fmt: skip


def test_item08_refusals_print_huge_counts_as_powers_of_ten():
    with pytest.raises(ValueError, match=r"about 10\^4515 cells") as info:
        dp.Domain.binary(15000).check_dense()
    assert len(str(info.value)) < 400  # not the digits, nor 15000 attribute names
    with pytest.raises(ValueError, match=r"10\^"):
        smalldb.smalldb(dp.Dataset([[0] * 30], dp.Domain.binary(30)),
                        dp.MarginalWorkload.all_kway(dp.Domain.binary(30), 1), epsilon=1.0,
                        alpha=0.064, rng=0)  # fmt: skip
    assert _validate.count(12345) == "12,345" and _validate.count(10**40) == "about 10^40"


# --- 9. tiny gamma ----------------------------------------------------------------------------


def test_item09_epochs_with_a_tiny_gamma_are_computed_directly():
    indices, times = growing.epochs(10, 1e-15, 12)
    assert times.tolist() == [10, 11, 12]
    # each time is the first of its index: the index before it gives an earlier time
    for i, t in zip(indices[1:], times[1:]):
        assert math.ceil(10 * math.exp((i - 1) * math.log1p(1e-15)) * (1 - 1e-12)) < t
    for gamma in (1e-20, 1e-300):
        with pytest.raises(ValueError, match="gamma=.* is too small"):
            growing.epochs(10, gamma, 12)
        with pytest.raises(ValueError, match="gamma"):
            growing.bb_scheduler(STREAM, growing.LaplaceBox(), Q, epsilon=1.0, gamma=gamma, rng=0)


def test_item09_epochs_agree_with_the_definition_for_ordinary_gamma():
    for n0, gamma, horizon in [(10, 0.5, 100), (7, 0.013, 300), (100, 0.001, 110)]:
        indices, times = growing.epochs(n0, gamma, horizon)
        brute = {}
        for i in range(20000):
            t = math.ceil(n0 * math.exp(i * math.log1p(gamma)) * (1 - 1e-12))
            if t > horizon:
                break
            brute.setdefault(t, i)
        assert times.tolist() == list(brute) and indices.tolist() == list(brute.values())


# --- 10. round limits ---------------------------------------------------------------------------


def test_item10_ic_and_the_learner_refuse_too_many_rounds_before_anything():
    budget = dp.PrivacyBudget(1.0)
    dua = iterative.MultiplicativeWeightsDUA(DOM.size, alpha=5e-4)
    with pytest.raises(ValueError, match="max_rounds=100,000"):
        iterative.iterative_construction(DATA, Q, dua, alpha=1e-3, epsilon=1.0, rng=0,
                                         budget=budget)  # fmt: skip
    assert budget.ledger == []
    with pytest.raises(ValueError, match="max_rounds"):
        mw.learn(DATA.histogram(), Q, alpha=1e-6)
    with pytest.raises(ValueError, match="max_rounds"):
        mw.private_mw(DATA, Q, epsilon=1.0, alpha=1e-4, rng=0, budget=budget)
    assert budget.ledger == []


def test_item10_the_round_limit_is_an_opt_in_not_a_ceiling():
    run = mw.learn(DATA.histogram(), Q, alpha=0.01, max_rounds=10**6)
    assert run.trace[-1].max_error <= 0.01
    with pytest.raises(ValueError, match="max_rounds=10"):
        mw.learn(DATA.histogram(), Q, alpha=0.05, max_rounds=10)


# --- 11. gaussian_width's memory -----------------------------------------------------------------


def test_item11_gaussian_width_checks_the_size_of_its_directions():
    with pytest.raises(ValueError, match=r"samples x k\) needs 4,000,000,000 cells"):
        projection.gaussian_width(Q, samples=10**9, rng=0)


# --- 12. the simplex projection of huge points ------------------------------------------------


@pytest.mark.parametrize(
    ("v", "expected"),
    [([1e16, 0.0], [1.0, 0.0]), ([1e300] * 3, [1 / 3] * 3), ([-1e300, 0.0], [0.0, 1.0]),
     ([0.3, 0.9, -1.0], [0.2, 0.8, 0.0])],
)  # fmt: skip
def test_item12_simplex_projection_of_huge_entries(v, expected):
    np.testing.assert_allclose(projection.simplex_projection(v), expected, atol=1e-12)


def test_item12_project_a_far_point():
    W = dp.MatrixWorkload(np.eye(2))
    proj = projection.project([1e200, 1e200], W)
    np.testing.assert_allclose(proj.histogram, [0.5, 0.5])


# --- 13. an empty transcript ---------------------------------------------------------------------


def test_item13_an_interaction_with_no_queries_has_no_errors():
    mech = adaptive.ExactAnswers(np.array([1, 2, 1, 0]))
    errors = adaptive.interact(mech, adaptive.fixed_queries([])).errors(np.full(4, 0.25))
    assert errors.shape == (0,)


# --- 14. candidates must be histograms -------------------------------------------------------------


@pytest.mark.parametrize("bad", [-np.eye(3), np.ones((2, 3)), np.full((2, 3), 0.5)])
def test_item14_candidates_that_are_not_histograms_are_refused(bad):
    with pytest.raises(ValueError, match="normalised histograms"):
        median.MedianMechanism(np.array([1, 1, 0]), candidates=bad, eta=0.2)
    with pytest.raises(ValueError, match="normalised histograms"):
        median.HalvingDUA(bad)


# --- 15. audit.encode is one-to-one --------------------------------------------------------------


def test_item15_encode_refuses_what_it_would_truncate_or_clip():
    with pytest.raises(ValueError, match="integers in -50..49"):
        audit.encode([1.7])
    with pytest.raises(ValueError, match="clip=True"):
        audit.encode([100])
    assert audit.encode([49]) != audit.encode([48])
    assert audit.encode([100], clip=True) == audit.encode([49])  # only on request
    assert audit.encode([3.0]) == audit.encode([3])


# --- 16. strings are not numbers ----------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: dp.laplace("3", sensitivity=1.0, epsilon=1.0, rng=0),
        lambda: dp.MatrixWorkload([["0.5", "1"]]),
        lambda: Q.answer([str(x) for x in DATA.histogram()]),
        lambda: dp.laplace(None, sensitivity=1.0, epsilon=1.0, rng=0),
        lambda: dp.gaussian(["1"], sensitivity=1.0, epsilon=1.0, delta=1e-6, rng=0),
    ],
)
def test_item16_strings_and_none_are_refused_as_not_numeric(call):
    with pytest.raises(TypeError, match="numeric array-like"):
        call()


# --- 17. marginal index and cell --------------------------------------------------------------


def test_item17_marginal_index_and_cell_are_validated():
    Q2 = dp.MarginalWorkload.all_kway(DOM, 2)
    with pytest.raises(ValueError, match=r"cell must give one value per attribute \(a in 0..1\)"):
        Q.marginal_query(0, [5])
    with pytest.raises(ValueError, match="b in 0..1"):
        Q2.marginal_query(0, [1])
    with pytest.raises(ValueError, match="m must be >= 0"):
        Q.marginal_slice(-1)
    with pytest.raises(ValueError, match=r"marginal index m must be in 0..1"):
        Q.marginal_query(2, [0])
    np.testing.assert_array_equal(Q2.marginal_query(0, [1, 0]), [0, 0, 1, 0])


# --- 18. Dataset reports what was passed ------------------------------------------------------


@pytest.mark.parametrize(
    ("records", "shown"),
    [([[np.inf, 0]], "= inf"), ([[1e20, 0]], "= 1e+20"),
     (np.array([[2**64 - 1, 0]], dtype=np.uint64), "= 18446744073709551615"),
     ([[3, 0]], "= 3"), ([[-1, 0]], "= -1")],
)  # fmt: skip
def test_item18_dataset_reports_the_value_passed(records, shown):
    with pytest.raises(ValueError, match=re.escape(f"records[0, 0] {shown} is outside")):
        dp.Dataset(records, DOM)


def test_item18_ragged_records_are_described_in_our_words():
    with pytest.raises(ValueError, match="rows have different lengths"):
        dp.Dataset([[0, 1], [1]], DOM)


# --- 19. errors that name the parameter -------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: median.best_candidate(np.eye(4), np.ones((1, 3)), np.array([1, 1, 1])), ValueError, "candidates must be a non-empty matrix with 3 columns"),
        (lambda: median.HalvingDUA(np.eye(3)).update(np.ones(3, bool), np.ones(4), 0.5), ValueError, "query must have length 3"),
        (lambda: adaptive.agreement(np.ones(3), np.ones(4)), ValueError, "feature and label"),
        (lambda: static.static_figure(lambda eps: None, eps=(e for e in [1, 2])), ValueError, "grid 'eps' must be a non-empty sequence of slider values .* got generator"),
        (lambda: iterative.iterative_construction(DATA, Q, None, alpha=0.5, epsilon=1.0, rng=0), TypeError, "dua must be a database update algorithm"),
        (lambda: mw.OnlinePMW(DATA, epsilon=1, alpha=1e-6, rng=0), ValueError, "lower alpha=1e-06"),
        (lambda: widgets.interactive_figure(lambda x: None, x=5), TypeError, "control 'x' must be an ipywidgets"),
        (lambda: viz.histogram_animation(np.full(2, 0.5), {}), ValueError, "frames must be a non-empty dict"),
        (lambda: viz.baseline_bounds(None, n=10, epsilon=1.0, delta=1e-6, k_max=0), ValueError, "k_max must be an integer >= 1"),
        (lambda: dp.ZCDPBudget(1.0).charge_pure(1e200), ValueError, "epsilon=1e\\+200 is too large"),
    ],
)  # fmt: skip
def test_item19_errors_name_the_parameter(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- 20. the two judgement calls -------------------------------------------------------------------


def test_item20_booleans_are_counts_and_documented():
    value = dp.laplace(True, sensitivity=1.0, epsilon=1.0, rng=0)
    assert value == dp.laplace(1, sensitivity=1.0, epsilon=1.0, rng=0)
    assert "booleans" in _validate.array.__doc__


def test_item20_a_vacuous_composed_delta_is_capped_and_warned_about():
    with pytest.warns(privacy.VacuousGuaranteeWarning, match="vacuous"):
        assert privacy.basic_composition([1.0, 1.0], [0.6, 0.6]) == (2.0, 1.0)
    with pytest.warns(privacy.VacuousGuaranteeWarning):
        assert privacy.advanced_composition(0.1, 10**7, 1e-6, delta=1e-6)[1] == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert privacy.basic_composition([1.0], [0.5]) == (1.0, 0.5)  # no warning below 1
