"""Inputs are validated once, at the public boundary (issue 27, item 5); the domain types check
themselves (item 3; the import graph is tested in ``test_package_structure.py``).

``benchmarks/validation_count.py`` wraps every function of :mod:`dpteach._validate` and records
which calls see ``mwem``'s ``epsilon`` (or the per-step ``epsilon / (2T)`` derived from it): before
issue 27 a one-round run checked it nine times on its way to the noise (``mwem``, ``mwem_rounds``,
``safe_laplace_grid``, the charge three times, ``exponential``, ``laplace`` and its grid), and
three more times per further round. Now ``mwem`` checks it once and its internal layers take the
checked value; a bad ``epsilon`` is still refused with the same message, before anything is
charged or drawn; and the internal paths are the public mechanisms, draw for draw.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

import dpteach as dp
from dpteach import mechanisms, mw, privacy
from dpteach.domain import same_universe

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location(
    "validation_count", ROOT / "benchmarks/validation_count.py"
)
validation_count = importlib.util.module_from_spec(spec)
spec.loader.exec_module(validation_count)

DOM = dp.Domain.binary(3)
DATA = dp.Dataset([[0, 1, 1], [1, 0, 0], [1, 1, 0], [0, 0, 1]] * 5, DOM)
Q = dp.MarginalWorkload.all_kway(DOM, 1)


@pytest.mark.parametrize("rounds", [None, 1, 3])
@pytest.mark.parametrize("budget", [True, False])
def test_mwem_validates_its_epsilon_once(rounds, budget):
    found = validation_count.epsilon_validations(rounds=rounds, budget=budget)
    assert found == [("mw.mwem", "positive")]


@pytest.mark.parametrize(
    "name, site",
    [
        ("private_mw", "mw.private_mw"),
        ("iterative_construction", "iterative.iterative_construction"),
        ("smalldb", "smalldb.smalldb"),
        ("projection_mechanism", "projection.projection_mechanism"),
        ("PrivateGuessAndCheck", "median.PrivateGuessAndCheck.__init__"),
        ("OnlinePMW", "mw.OnlinePMW.__init__"),
    ],
)
def test_the_other_mechanisms_validate_their_epsilon_once(name, site):
    """Their per-step epsilons (``eps0``, the sparse vector's ``eps/2``, the answers'
    ``eps/(2m)``) included: the rounds, the sparse vector and the answers take internal paths."""
    assert validation_count.other_validations(name) == [(site, "positive")]


def test_the_counter_sees_every_validation_it_should():
    """The counter is not blind: the public mechanisms, called directly, are counted."""
    with validation_count.recorded_validations() as calls:
        mw.mwem_rounds(20, 0.7317, Q)
        mechanisms.safe_laplace_grid(0.1, 0.7317)
        privacy.charge(dp.PrivacyBudget(1.0), 0.7317, label="x")
    seen = [(site, name) for site, name, args in calls if 0.7317 in args]
    assert seen == [
        ("mw.mwem_rounds", "positive"),
        ("mechanisms.safe_laplace_grid", "positive"),
        ("privacy._checked", "nonnegative"),
    ]


@pytest.mark.parametrize(
    "epsilon, error, message",
    [
        (0.0, ValueError, "epsilon must be > 0, got 0.0"),
        (-1.0, ValueError, "epsilon must be > 0, got -1.0"),
        (math.nan, ValueError, "epsilon must be finite, got nan"),
        (math.inf, ValueError, "epsilon must be finite, got inf"),
        (True, TypeError, "epsilon must be a real number, got bool True"),
        ("1", TypeError, "epsilon must be a real number, got str '1'"),
        (None, TypeError, "epsilon must be a real number, got NoneType None"),
    ],
)
@pytest.mark.parametrize("rounds", [None, 2])
def test_a_bad_epsilon_is_refused_before_any_charge_or_draw(epsilon, error, message, rounds):
    budget, gen = dp.PrivacyBudget(10.0), np.random.default_rng(3)
    state = gen.bit_generator.state
    with pytest.raises(error, match=f"^{message}"):
        mw.mwem(DATA, Q, epsilon=epsilon, rounds=rounds, rng=gen, budget=budget)
    assert budget.ledger == [] and gen.bit_generator.state == state


def test_a_bad_budget_is_refused_before_any_draw():
    gen = np.random.default_rng(3)
    state = gen.bit_generator.state
    with pytest.raises(TypeError, match="budget must be a PrivacyBudget, a ZCDPBudget or None"):
        mw.mwem(DATA, Q, epsilon=1.0, rounds=2, rng=gen, budget=1.0)
    assert gen.bit_generator.state == state


def test_an_epsilon_whose_steps_underflow_is_refused_before_the_charge():
    budget = dp.PrivacyBudget(1.0)
    with pytest.raises(ValueError, match="too large to represent"):
        mw.mwem(DATA, Q, epsilon=5e-324, rounds=3, rng=0, budget=budget)
    assert budget.ledger == []


@pytest.mark.parametrize("value", [0.3, np.array([0.1, 0.5, 0.25]), np.zeros(40)])
def test_the_internal_laplace_is_the_public_one(value):
    size = np.size(value)
    grid = mechanisms._safe_laplace_grid(0.1, 0.37, k=size)
    public = mechanisms.laplace(value, sensitivity=0.1, epsilon=0.37, rng=5)
    internal = mechanisms._laplace(value, grid, np.random.default_rng(5))
    assert type(public) is type(internal)
    np.testing.assert_array_equal(public, internal)


@pytest.mark.parametrize("epsilon", [1e-7, 0.37, 50.0])
def test_the_internal_exponential_is_the_public_one(epsilon):
    scores = np.random.default_rng(1).random(30)
    public = mechanisms.exponential(scores, sensitivity=0.1, epsilon=epsilon, rng=9, size=200)
    internal = mechanisms._exponential(scores, 0.1, epsilon, np.random.default_rng(9), size=200)
    np.testing.assert_array_equal(public, internal)
    one = mechanisms.exponential(scores, sensitivity=0.1, epsilon=epsilon, rng=9)
    assert one == mechanisms._exponential(scores, 0.1, epsilon, np.random.default_rng(9))


@pytest.mark.parametrize(
    "make, kwargs",
    [
        (lambda: dp.PrivacyBudget(1.0), {"epsilon": 0.25, "delta": 0.0}),
        (lambda: dp.PrivacyBudget(1.0, 1e-6), {"epsilon": 0.25, "delta": 1e-7}),
        (lambda: dp.ZCDPBudget(1.0), {"epsilon": 0.5}),
        (lambda: dp.ZCDPBudget(1.0), {"epsilon": 0.5, "delta": 1e-6, "rho": 0.1}),
    ],
)
def test_the_internal_charge_records_what_charge_records(make, kwargs):
    public, internal = make(), make()
    privacy.charge(public, label="step", **kwargs)
    privacy._charge(internal, label="step", **kwargs)
    assert public.ledger == internal.ledger != []


def test_charge_still_validates_its_arguments():
    with pytest.raises(ValueError, match="epsilon must be >= 0"):
        privacy.charge(dp.PrivacyBudget(1.0), -0.5, label="x")
    with pytest.raises(ValueError, match="delta must be in"):
        privacy.charge(dp.PrivacyBudget(1.0, 0.1), 0.5, 2.0, label="x")
    with pytest.raises(ValueError, match="epsilon=1e\\+200 is too large to charge"):
        privacy.charge(dp.ZCDPBudget(1.0), 1e200, label="x")


# --- the domain types check themselves ---------------------------------------------------------


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: dp.Domain.check(None), TypeError, "domain must be a dpteach.Domain, got NoneType"),
        (lambda: dp.Dataset.check(DATA.records), TypeError, "data must be a dpteach.Dataset"),
        (lambda: dp.MatrixWorkload.check(np.eye(2), "base"), TypeError, "base must be a dpteach"),
        (lambda: same_universe(None, Q), TypeError, "must each be a Domain"),
        (lambda: same_universe(DATA, "abc"), TypeError, "must each be a Domain"),
        (lambda: same_universe(DATA, np.ones(3)), ValueError, "8 cells and 3 cells"),
        (lambda: same_universe(DATA, dp.Domain.binary(2)), ValueError, "different universes"),
    ],
)
def test_the_domain_types_refuse_what_they_are_not(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_the_domain_types_return_what_they_check():
    assert dp.Domain.check(DOM) is DOM and dp.Dataset.check(DATA) is DATA
    assert dp.MarginalWorkload.check(Q) is Q
    assert same_universe(DATA, Q) is None and same_universe(DOM, np.ones(DOM.size)) is None


def test_moved_names_are_the_same_objects():
    """``mw.mw_update`` lives with the workloads it reweights, the multiset counts with the
    theory (their old homes still export them)."""
    from dpteach import median, queries, theory

    assert mw.mw_update is queries.mw_update
    assert median.multiset_count is theory.multiset_count
    assert median.log_multiset_count is theory.log_multiset_count
