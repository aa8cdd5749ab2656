# ruff: noqa: E501  (tables of one-line cases read best unwrapped)
"""Every mechanism that takes a ``budget`` charges both kinds of budget correctly (issue 26).

One table, :data:`CASES`, lists every public callable of the package with a ``budget``
parameter; :func:`test_every_budget_taking_callable_is_listed` scans the package with
``inspect.signature`` and fails when a new one is added without a row here. Each row runs the
mechanism against a :class:`~dpteach.PrivacyBudget` and a :class:`~dpteach.ZCDPBudget` and
checks the ledger against what its docstring promises: ``epsilon`` (and ``delta``) of a
``PrivacyBudget``; ``epsilon^2/2`` of a ``ZCDPBudget`` for a pure step, the release's own ``rho``
for the Gaussian mechanism, and a ``TypeError`` (nothing recorded) for an approximate-DP step.

The property test: a *refused* call — a budget a little too small, or a kind it cannot account —
raises, leaves the ledger as it was, consumes nothing of a passed Generator, and the mechanism
then answers exactly as a fresh one would.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpteach as dp
from dpteach import (
    _noise,
    baselines,
    erm,
    growing,
    iterative,
    median,
    mw,
    privacy,
    projection,
    reconstruction,
    smalldb,
    streams,
)

DOM = dp.Domain({"a": 2, "b": 2})
DATA = dp.Dataset([[0, 1], [1, 0], [1, 1], [0, 0], [1, 1]] * 4, DOM)  # n = 20
Q = dp.MarginalWorkload.all_kway(DOM, 1)
STREAM = streams.DatabaseStream([[0, 1], [1, 0], [1, 1], [0, 0]] * 10, DOM, n0=8)
COUNTS = np.array([5.0, 3.0, 2.0, 10.0])
QUERY = np.array([1.0, 0.0, 1.0, 0.0])
BIG = 1e6  # a budget that pays for everything below


def _gaussian_rho(sensitivity: float, epsilon: float, delta: float, k: int = 1) -> float:
    """The rho a Gaussian release of ``k`` values records on a ZCDPBudget (measured with the
    Gaussian mechanism itself, whose own rho is checked separately below)."""
    budget = dp.ZCDPBudget(BIG)
    dp.gaussian(np.zeros(k), sensitivity=sensitivity, epsilon=epsilon, delta=delta, rng=0,
                budget=budget)  # fmt: skip
    return budget.spent


@dataclass(frozen=True)
class Case:
    """``run(budget, rng)`` calls the mechanism (and, for objects, uses it) and returns what it
    released; ``pure(result)`` the pure epsilons it charged, step by step, or ``approx`` one
    ``(epsilon, delta)`` step, or ``rho`` (with ``approx``) the Gaussian release's own rho."""

    run: Callable
    pure: Callable | None = None
    approx: tuple[float, float] | None = None
    rho: Callable | None = None


def _pmwg(budget, rng):
    pmwg = growing.PMWG(STREAM, epsilon=1.0, alpha=0.25, rng=rng, scale=2.0, budget=budget)
    answers = [pmwg.answer(q) for q in np.eye(4)]
    return pmwg, answers


def _pmwg_pure(out):
    pmwg, _ = out
    t, s = STREAM.n0, 2.0
    return [4 / (t * s)] * pmwg.instances + [1 / (t * s)] * pmwg.hard


def _sparse(cls, **kw):
    def run(budget, rng):
        sv = cls(0.5, sensitivity=1.0, epsilon=0.6, rng=rng, budget=budget, **kw)
        return sv, [None if sv.halted else sv.test(v) for v in (0.1, 2.0, 0.2)]

    return run


def _guess_and_check(budget, rng):
    pgc = median.PrivateGuessAndCheck(COUNTS, eta=0.2, m=2, epsilon=1.0, rng=rng, budget=budget)
    return pgc, [pgc.ask(QUERY, g) for g in (0.1, 0.7)]


def _median_mechanism(budget, rng):
    candidates = np.eye(4)[[0, 1, 2, 3, 3]].mean(axis=0, keepdims=True).repeat(2, axis=0)
    candidates[1] = [0.4, 0.1, 0.1, 0.4]
    pmm = median.PrivateMedianMechanism(COUNTS, candidates=candidates, eta=0.2, m=2,
                                        epsilon=1.0, rng=rng, budget=budget)  # fmt: skip
    return pmm, [pmm.answer(q) for q in (QUERY, 1 - QUERY)]


#: Features of norm at most 1 and labels for the ERM black box.
ERM_X = np.array([[0.6, 0.8], [1.0, 0.0], [0.0, 1.0], [0.6, -0.8]])
ERM_Y = np.array([1.0, -1.0, 1.0, -1.0])


def _online_pmw(budget, rng):
    pmw = mw.OnlinePMW(DATA, epsilon=1.0, alpha=0.3, rng=rng, budget=budget)
    return pmw, [pmw.answer(q) for q in np.eye(4)]


def _ic(delta):
    def run(budget, rng):
        dua = iterative.MultiplicativeWeightsDUA(DOM.size, alpha=0.2)
        return iterative.iterative_construction(DATA, Q, dua, alpha=0.4, epsilon=1.0, rng=rng,
                                                delta=delta, budget=budget)  # fmt: skip

    return run


def _ic_pure(result):
    return [result.info["eps0"]] * (2 * len(result.trace))


def _scheduler(budget, rng):
    return growing.bb_scheduler(STREAM, growing.LaplaceBox(), Q, epsilon=1.0, gamma=1.0,
                                rng=rng, budget=budget)  # fmt: skip


def _improver(budget, rng):
    return growing.bb_improver(STREAM, growing.LaplaceBox(), Q, epsilon=1.0, delta=1e-6,
                               rng=rng, release_times=[10, 20], budget=budget)  # fmt: skip


def _improver_pure(result):
    rho = privacy.approx_dp_to_zcdp(1.0, 1e-6)
    rhos = growing.improver_rhos(np.arange(STREAM.n0, STREAM.horizon + 1), rho=rho,
                                 n0=STREAM.n0, c=0.25)  # fmt: skip
    return list(np.sqrt(2 * rhos))  # every run up to the horizon, simulated or not


SIGMA = dp.gaussian_sigma(1.0, 0.5, 1e-6)
K = Q.k

#: Every public callable with a ``budget`` parameter -> how it is charged.
CASES: dict[str, Case] = {
    "mechanisms.laplace": Case(
        lambda b, g: dp.laplace(0.5, sensitivity=1.0, epsilon=0.7, rng=g, budget=b),
        pure=lambda _: [0.7],
    ),
    "mechanisms.gaussian": Case(
        lambda b, g: dp.gaussian(0.5, sensitivity=1.0, epsilon=0.5, delta=1e-6, rng=g, budget=b),
        approx=(0.5, 1e-6),
        rho=lambda _: _noise.gauss_grid(1.0, SIGMA, 1).rho,
    ),
    "mechanisms.exponential": Case(
        lambda b, g: dp.exponential(
            [0.0, 1.0, 0.5], sensitivity=1.0, epsilon=0.8, rng=g, budget=b
        ),  # fmt: skip
        pure=lambda _: [0.8],
    ),
    "mechanisms.Sparse": Case(_sparse(dp.Sparse, cutoff=2), pure=lambda _: [0.6]),
    "mechanisms.Sparse(delta>0)": Case(
        _sparse(dp.Sparse, cutoff=2, delta=1e-6), approx=(0.6, 1e-6)
    ),  # fmt: skip
    "mechanisms.AboveThreshold": Case(_sparse(dp.AboveThreshold), pure=lambda _: [0.6]),
    "mechanisms.NumericSparse": Case(_sparse(dp.NumericSparse, cutoff=2), pure=lambda _: [0.6]),
    "median.PrivateGuessAndCheck": Case(_guess_and_check, pure=lambda _: [1.0]),
    "mw.private_mw": Case(
        lambda b, g: mw.private_mw(DATA, Q, epsilon=1.0, alpha=0.4, rng=g, budget=b),
        pure=lambda _: [1.0],
    ),
    "mw.private_mw(delta>0)": Case(
        lambda b, g: mw.private_mw(DATA, Q, epsilon=1.0, alpha=0.4, delta=1e-6, rng=g, budget=b),
        approx=(1.0, 1e-6),
    ),
    "mw.mwem": Case(
        lambda b, g: mw.mwem(DATA, Q, epsilon=1.0, rounds=2, rng=g, budget=b),
        pure=lambda _: [1.0],
    ),
    "mw.OnlinePMW": Case(_online_pmw, pure=lambda _: [1.0]),
    "projection.projection_mechanism": Case(
        lambda b, g: projection.projection_mechanism(
            DATA, Q, epsilon=1.0, delta=1e-6, rng=g, budget=b
        ),  # fmt: skip
        approx=(1.0, 1e-6),
        rho=lambda _: _gaussian_rho(math.sqrt(K) / DATA.n, 1.0, 1e-6, K),
    ),
    "smalldb.smalldb": Case(  # the example: epsilon = 4 costs rho = 8, not 4
        lambda b, g: smalldb.smalldb(DATA, Q, epsilon=4.0, alpha=0.5, rng=g, budget=b),
        pure=lambda _: [4.0],
    ),
    "iterative.iterative_construction": Case(_ic(0.0), pure=_ic_pure),
    "iterative.iterative_construction(delta>0)": Case(_ic(1e-6), approx=(1.0, 1e-6)),
    "growing.bb_scheduler": Case(_scheduler, pure=lambda r: list(r.info["epsilons"])),
    "growing.bb_improver": Case(_improver, pure=_improver_pure),
    "growing.PMWG": Case(_pmwg, pure=_pmwg_pure),
    "baselines.laplace_answers": Case(
        lambda b, g: baselines.laplace_answers([0.2, 0.5], n=20, epsilon=0.9, rng=g, budget=b),
        pure=lambda _: [0.9],
    ),
    "baselines.gaussian_answers": Case(
        lambda b, g: baselines.gaussian_answers(
            [0.2, 0.5], n=20, epsilon=0.9, delta=1e-6, rng=g, budget=b
        ),  # fmt: skip
        approx=(0.9, 1e-6),
        rho=lambda _: _gaussian_rho(math.sqrt(2) / 20, 0.9, 1e-6, 2),
    ),
    "baselines.laplace_histogram_answers": Case(
        lambda b, g: baselines.laplace_histogram_answers(DATA, Q, epsilon=0.9, rng=g, budget=b),
        pure=lambda _: [0.9],
    ),
    "baselines.gaussian_histogram_answers": Case(
        lambda b, g: baselines.gaussian_histogram_answers(
            DATA, Q, epsilon=0.9, delta=1e-6, rng=g, budget=b
        ),  # fmt: skip
        approx=(0.9, 1e-6),
        rho=lambda _: _gaussian_rho(math.sqrt(2) / DATA.n, 0.9, 1e-6, DOM.size),
    ),
    "baselines.laplace_marginal_answers": Case(
        lambda b, g: baselines.laplace_marginal_answers(DATA, Q, epsilon=0.9, rng=g, budget=b),
        pure=lambda _: [0.9],
    ),
    "baselines.gaussian_marginal_answers": Case(
        lambda b, g: baselines.gaussian_marginal_answers(
            DATA, Q, epsilon=0.9, delta=1e-6, rng=g, budget=b
        ),  # fmt: skip
        approx=(0.9, 1e-6),
        rho=lambda _: _gaussian_rho(math.sqrt(2 * len(Q.marginals)) / DATA.n, 0.9, 1e-6, K),
    ),
    "median.PrivateMedianMechanism": Case(_median_mechanism, pure=lambda _: [1.0]),
    "erm.output_perturbation": Case(
        lambda b, g: erm.output_perturbation(ERM_X, ERM_Y, lam=0.5, epsilon=0.7, rng=g, budget=b),
        pure=lambda _: [0.7],
    ),
    "reconstruction.laplace_answers": Case(
        lambda b, g: reconstruction.laplace_answers(
            np.eye(3), [1, 0, 1], epsilon=0.6, rng=g, budget=b
        ),  # fmt: skip
        pure=lambda _: [0.6],
    ),
}

#: Public callables with a ``budget`` parameter that are accounting itself, not mechanisms.
ACCOUNTING = {"privacy.charge", "privacy.cost", "privacy.can_afford", "privacy.check_budget"}


def _budget_taking_callables() -> set[str]:
    """``module.name`` (and ``module.Class.method``) of every public callable of dpteach whose
    signature has a ``budget`` parameter."""
    found = set()
    for info in pkgutil.iter_modules(dp.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"dpteach.{info.name}")
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            members = [(name, obj)]
            if inspect.isclass(obj):
                members += [(f"{name}.{m}", f) for m, f in vars(obj).items()
                            if not m.startswith("_") and callable(f)]  # fmt: skip
            for qualified, member in members:
                try:
                    params = inspect.signature(member).parameters
                except (TypeError, ValueError):
                    continue
                if "budget" in params:
                    found.add(f"{info.name}.{qualified}")
    return found


def test_every_budget_taking_callable_is_listed():
    listed = {name.split("(")[0] for name in CASES} | ACCOUNTING
    found = _budget_taking_callables()
    assert found - listed == set(), "add these to CASES (and check how they charge)"
    assert listed - found == set(), "these no longer take a budget"


def _ledger(budget) -> list:
    return list(budget.ledger)


@pytest.mark.parametrize("name", CASES)
def test_a_privacy_budget_is_charged_epsilon_and_delta(name):
    case = CASES[name]
    budget = dp.PrivacyBudget(BIG, 0.5)
    out = case.run(budget, 0)
    if case.approx is not None:
        assert budget.spent_epsilon == pytest.approx(case.approx[0], rel=1e-12)
        assert budget.spent_delta == pytest.approx(case.approx[1], rel=1e-12)
    else:
        assert budget.spent_epsilon == pytest.approx(math.fsum(case.pure(out)), rel=1e-9)
        assert budget.spent_delta == 0
    assert budget.spent_epsilon > 0


@pytest.mark.parametrize("name", CASES)
def test_a_zcdp_budget_is_charged_rho(name):
    case = CASES[name]
    budget = dp.ZCDPBudget(BIG)
    if case.approx is not None and case.rho is None:  # (eps, delta)-DP: no zCDP guarantee
        with pytest.raises(TypeError, match="ZCDPBudget"):
            case.run(budget, 0)
        assert budget.ledger == []
        return
    out = case.run(budget, 0)
    if case.rho is not None:
        expected = case.rho(out)
    else:
        expected = math.fsum(e * e / 2 for e in case.pure(out))
    assert budget.spent == pytest.approx(expected, rel=1e-9)
    assert budget.spent > 0


def test_the_gaussian_release_rho_is_at_most_the_continuous_one_and_close_to_it():
    """The Gaussian mechanism's own rho (used above): the safe discrete noise is at least as
    large as the continuous calibration, and within 1 % of it."""
    rho = _noise.gauss_grid(1.0, SIGMA, 1).rho
    continuous = privacy.gaussian_zcdp(1.0, SIGMA)
    assert continuous * 0.99 <= rho <= continuous


def test_smalldb_under_zcdp_charges_eps_squared_over_two_not_eps():
    """Item 1 of the issue, as stated there."""
    budget = dp.ZCDPBudget(100)
    smalldb.smalldb(DATA, Q, epsilon=4.0, alpha=0.5, rng=0, budget=budget)
    assert budget.spent == pytest.approx(8.0)


# --- the property: a refused call changes nothing ------------------------------------------------


def _full_cost(name: str) -> tuple[float, float]:
    """What the call costs a PrivacyBudget (epsilon, delta), measured on a large one."""
    budget = dp.PrivacyBudget(BIG, 0.5)
    CASES[name].run(budget, 0)
    return budget.spent_epsilon, budget.spent_delta


def _released(out) -> object:
    """What a call released, comparable with ``==``: answers, histograms, choices."""
    if isinstance(out, tuple):  # (object, answers)
        return repr(out[1])
    if isinstance(out, dp.results.Result):
        return repr((out.synthetic.tolist(), np.asarray(out.answers).tolist()))
    return repr(np.asarray(out).tolist())


#: Mechanisms that charge their whole cost up front (one charge): a budget short of it refuses
#: the whole call. The others charge step by step (IC, the schedulers, PMWG): a short budget
#: stops them early by design, which is tested in their own modules.
UP_FRONT = [
    n
    for n in CASES
    if not n.startswith(("growing.", "iterative.iterative_construction")) or n.endswith("(delta>0)")
]


@pytest.mark.parametrize("name", UP_FRONT)
@settings(max_examples=8, deadline=None)
@given(fraction=st.floats(min_value=0.0, max_value=0.999))
def test_a_refused_call_changes_neither_the_budget_nor_later_answers(name, fraction):
    eps, delta = _full_cost(name)
    budget = dp.PrivacyBudget(max(eps * fraction, 1e-300), 0.5)  # eps * 5e-324 underflows
    budget.charge(0.0, label="earlier")  # a ledger that is not empty
    before = _ledger(budget)
    gen = np.random.default_rng(7)
    state = gen.bit_generator.state
    with pytest.raises(dp.BudgetExceededError):
        CASES[name].run(budget, gen)
    assert _ledger(budget) == before
    assert gen.bit_generator.state == state  # nothing was drawn
    # and the next call, on an adequate budget with the same Generator, is exactly a fresh one
    later = CASES[name].run(dp.PrivacyBudget(BIG, 0.5), gen)
    fresh = CASES[name].run(dp.PrivacyBudget(BIG, 0.5), np.random.default_rng(7))
    assert _released(later) == _released(fresh)


@pytest.mark.parametrize("name", [n for n in CASES if CASES[n].approx and not CASES[n].rho])
def test_an_approximate_step_refused_by_a_zcdp_budget_draws_nothing(name):
    budget = dp.ZCDPBudget(BIG)
    gen = np.random.default_rng(3)
    state = gen.bit_generator.state
    with pytest.raises(TypeError):
        CASES[name].run(budget, gen)
    assert budget.ledger == [] and gen.bit_generator.state == state


@pytest.mark.parametrize("name", CASES)
def test_a_budget_that_is_not_a_budget_is_refused_before_anything(name):
    gen = np.random.default_rng(5)
    state = gen.bit_generator.state
    with pytest.raises(TypeError, match="budget"):
        CASES[name].run("abc", gen)
    assert gen.bit_generator.state == state


@settings(max_examples=10, deadline=None)
@given(bad=st.sampled_from([np.ones(3), np.full(4, 2.0), np.full(4, np.nan), "1010"]))
def test_objects_answer_later_queries_as_if_a_refused_query_never_happened(bad):
    """Sparse vectors, GuessAndCheck, online PMW and PMWG: a refused query (wrong length, out
    of range, NaN, a string) changes neither the budget nor any later answer."""
    makers = {
        "OnlinePMW": lambda b: mw.OnlinePMW(DATA, epsilon=1.0, alpha=0.3, rng=1, budget=b),
        "PMWG": lambda b: growing.PMWG(
            STREAM, epsilon=1.0, alpha=0.25, rng=1, scale=2.0, budget=b
        ),  # fmt: skip
    }
    for make in makers.values():
        b1, b2 = dp.PrivacyBudget(BIG), dp.PrivacyBudget(BIG)
        tried, twin = make(b1), make(b2)
        tried.answer(np.eye(4)[0])
        twin.answer(np.eye(4)[0])
        spent = _ledger(b1)
        with pytest.raises((ValueError, TypeError)):
            tried.answer(bad)
        assert _ledger(b1) == spent
        assert [tried.answer(q) for q in np.eye(4)] == [twin.answer(q) for q in np.eye(4)]
    pgc = [median.PrivateGuessAndCheck(COUNTS, eta=0.2, m=2, epsilon=1.0, rng=1) for _ in "ab"]
    with pytest.raises((ValueError, TypeError)):
        pgc[0].ask(bad, 0.5)
    asked = [[p.ask(QUERY, g) for g in (0.9, 0.1)] for p in pgc]
    assert asked[0] == asked[1]


#: Calls refused by a check that needs the whole plan (a grid, a black box, a round limit):
#: before issue 26 several of these charged first. Each must charge and draw nothing.
LATE_REFUSALS = {
    "smalldb (candidate limit)": lambda b, g: smalldb.smalldb(DATA, Q, epsilon=1.0, alpha=0.01, rng=g, budget=b),
    "iterative_construction (round limit)": lambda b, g: iterative.iterative_construction(
        DATA, Q, iterative.MultiplicativeWeightsDUA(4, alpha=5e-4), alpha=1e-3, epsilon=1.0, rng=g, budget=b
    ),
    "private_mw (round limit)": lambda b, g: mw.private_mw(DATA, Q, epsilon=1.0, alpha=1e-4, rng=g, budget=b),
    "OnlinePMW (answer grid)": lambda b, g: mw.OnlinePMW(DATA, epsilon=1.0, alpha=1e-6, rng=g, budget=b),
    "bb_scheduler (black box)": lambda b, g: growing.bb_scheduler(
        STREAM, growing.SmallDBBox(alpha=0.01), Q, epsilon=1.0, gamma=1.0, rng=g, budget=b
    ),
    "bb_improver (black box)": lambda b, g: growing.bb_improver(
        STREAM, growing.SmallDBBox(alpha=0.01), Q, epsilon=1.0, delta=1e-6, rng=g, budget=b
    ),
    "bb_scheduler (Laplace grid)": lambda b, g: growing.bb_scheduler(
        STREAM, growing.LaplaceBox(), Q, epsilon=1e-300, gamma=1.0, rng=g, budget=b
    ),
    "PMWG (grids)": lambda b, g: growing.PMWG(STREAM, epsilon=1.0, alpha=0.3, rng=g, scale=1e13, budget=b).answer(np.eye(4)[0]),
}  # fmt: skip


@pytest.mark.parametrize("name", LATE_REFUSALS)
@pytest.mark.parametrize("kind", ["privacy", "zcdp"])
def test_a_late_refusal_charges_nothing_and_draws_nothing(name, kind):
    budget = dp.PrivacyBudget(10.0) if kind == "privacy" else dp.ZCDPBudget(10.0)
    gen = np.random.default_rng(11)
    state = gen.bit_generator.state
    with pytest.raises(ValueError):
        LATE_REFUSALS[name](budget, gen)
    assert budget.ledger == [] and gen.bit_generator.state == state


def test_every_charge_goes_through_privacy_charge():
    """No module but :mod:`dpteach.privacy` calls a budget's own ``charge``/``charge_pure``/
    ``can_afford`` (or their checked forms ``_record``/``_affords``): each goes through
    :func:`dpteach.privacy.charge` (or ``can_afford``), or, with values its caller validated,
    through the same function's internal path ``privacy._charge`` (``_can_afford``), so the zCDP
    conversion cannot be skipped again (issue 26, item 1; issue 27: validate once)."""
    import re
    from pathlib import Path

    offenders = []
    for path in sorted(Path(dp.__file__).parent.glob("*.py")):
        if path.name == "privacy.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\.(charge|charge_pure|can_afford|_record|_affords)\(", line):
                offenders.append(f"{path.name}:{number}: {line.strip()}")
    assert offenders == []


@pytest.mark.parametrize("make", [lambda: dp.PrivacyBudget(1.0), lambda: dp.ZCDPBudget(1.0)])
def test_a_trial_budget_is_charged_without_touching_the_budget(make):
    """What the schedulers and PMWG try charges on (a shallow copy: cheap at every query)."""
    budget = make()
    charge = privacy.charge
    charge(budget, 0.5, label="first")
    trial = budget.trial()
    charge(trial, 0.5, label="tried")
    assert len(budget.ledger) == 1 and len(trial.ledger) == 2
    assert trial.ledger[0] is budget.ledger[0]
    with pytest.raises(dp.BudgetExceededError):
        charge(trial, 2.0, label="too much")
    assert len(budget.ledger) == 1
