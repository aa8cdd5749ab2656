"""Iterative database construction (Roth, Lecture 7; Gupta, Roth and Ullman 2012).

A *database update algorithm* (DUA) keeps a synthetic database ``D^t``, starting from
``U(empty, ., .)``; given a query ``q`` on which ``D^t`` is wrong and (an estimate of) the true
value ``v``, it returns ``D^{t+1} = U(D^t, q, v)``. Its *update bound* ``B(alpha)`` caps the
number of updates on queries that ``D^t`` gets wrong by at least ``alpha``. A *private
distinguisher* finds such a query privately. The IC mechanism (Algorithm 1) alternates the two
for ``B(alpha/2)`` rounds.

Two DUAs: :class:`MultiplicativeWeightsDUA` (``B(alpha) = 4 ln|X| / alpha^2``) and the halving
update over small candidate databases, :class:`dpteach.median.HalvingDUA` (``B = log2 |C|``).
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from . import _validate as check
from .data import Dataset
from .mechanisms import exponential, laplace
from .median import HalvingDUA
from .mw import mw_update
from .privacy import BudgetExceededError, PrivacyBudget, advanced_composition
from .queries import Workload
from .results import Result, Round, kl_divergence
from .theory import ic_epsilon0, mw_mistake_bound


class DatabaseUpdateAlgorithm(Protocol):
    """What the IC mechanism needs of a DUA."""

    name: str
    domain_size: int

    def bound(self, alpha: float) -> float: ...
    def initial(self): ...
    def answers(self, state, workload: Workload) -> np.ndarray: ...
    def update(self, state, q: np.ndarray, v: float): ...
    def synthetic(self, state) -> np.ndarray: ...


class MultiplicativeWeightsDUA:
    """Multiplicative weights as a DUA: ``D^0`` uniform over X; on ``(q, v)``,
    ``D^{t+1}(x) ∝ D^t(x) exp(eta q(x))`` if ``v > q(D^t)`` and ``exp(-eta q(x))`` otherwise,
    with ``eta = alpha / 2`` (``alpha`` fixed at construction). ``B(alpha) = 4 ln|X| / alpha^2``.
    """

    name = "multiplicative weights"

    def __init__(self, domain_size: int, *, alpha: float):
        self.domain_size = check.integer(domain_size, "domain_size", minimum=2)
        self.alpha = check.positive(alpha, "alpha")

    def bound(self, alpha: float) -> float:
        return mw_mistake_bound(self.domain_size, alpha)

    def initial(self) -> np.ndarray:
        check.dense_size(self.domain_size)
        return np.full(self.domain_size, 1.0 / self.domain_size)

    def answers(self, state: np.ndarray, workload: Workload) -> np.ndarray:
        return workload._answer(state)

    def update(self, state: np.ndarray, q: np.ndarray, v: float) -> np.ndarray:
        direction = -1.0 if v > q @ state else 1.0
        return mw_update(state, q, direction * self.alpha / 2)

    def synthetic(self, state: np.ndarray) -> np.ndarray:
        return state


def exponential_distinguisher(
    true: np.ndarray, synthetic: np.ndarray, *, n: int, epsilon: float, rng
) -> int:
    """Private distinguisher (Lecture 7, Thm 6): the exponential mechanism with quality
    ``|q(D) - q(D^t)|`` (sensitivity ``1/n``); ``epsilon``-DP."""
    return exponential(np.abs(true - synthetic), sensitivity=1 / n, epsilon=epsilon, rng=rng)


def exact_distinguisher(true: np.ndarray, synthetic: np.ndarray, **_) -> int:
    """The worst query exactly: NOT private, for contrast."""
    return int(np.argmax(np.abs(true - synthetic)))


DISTINGUISHERS = {"exponential": exponential_distinguisher, "exact": exact_distinguisher}


def iterative_construction(
    data: Dataset,
    workload: Workload,
    dua: DatabaseUpdateAlgorithm,
    *,
    alpha: float,
    epsilon: float,
    rng: np.random.Generator | int,
    delta: float = 0.0,
    distinguisher: str = "exponential",
    budget: PrivacyBudget | None = None,
) -> Result:
    """The Iterative Construction mechanism (Lecture 7, Algorithm 1).

    For ``t = 1 .. B(alpha/2)``: the distinguisher picks ``q_t`` (exponential mechanism at
    ``eps_0``, quality ``|q(D) - q(D^{t-1})|``); estimate ``v_t = q_t(D) + Lap(1/(eps_0 n))``; if
    ``|v_t - q_t(D^{t-1})| < 3 alpha / 4`` stop and output ``D^{t-1}``, else
    ``D^t = U(D^{t-1}, q_t, v_t)``.

    Guarantee (Theorem 4), replace-one neighbours, sensitivity ``1/n``: with
    ``eps_0 = eps / (2 B(alpha/2))`` it is ``eps``-DP (basic composition of ``2B`` steps); with
    ``eps_0 = eps / (4 sqrt(B(alpha/2) ln(1/delta)))`` it is ``(eps, delta)``-DP (advanced
    composition). Pure DP: ``budget`` must afford the whole ``eps`` (checked before anything is
    released) and is charged ``eps_0`` per step as the run goes; approximate DP: charged
    ``(eps, delta)`` once, before the first step. ``distinguisher="exact"`` is not private.
    """
    check.same_universe(check.dataset(data), check.workload(workload))
    if workload.domain_size != dua.domain_size:
        raise ValueError("data, workload and dua must share one universe (dua.domain_size)")
    if budget is not None and not isinstance(budget, PrivacyBudget):
        raise TypeError(f"budget must be a PrivacyBudget or None, got {type(budget).__name__}")
    alpha = check.positive(alpha, "alpha")
    epsilon = check.positive(epsilon, "epsilon")
    delta = check.delta(delta)
    if distinguisher not in DISTINGUISHERS:
        raise ValueError(f"distinguisher must be one of {sorted(DISTINGUISHERS)}")
    gen = check.rng(rng)
    bound = dua.bound(alpha / 2)
    rounds = math.ceil(bound)
    eps0 = ic_epsilon0(epsilon, rounds, delta)
    if delta > 0 and advanced_composition(eps0, 2 * rounds, delta)[0] > epsilon:
        raise ValueError(
            f"epsilon={epsilon} is too large for advanced composition here; use delta=0"
        )
    if budget is not None:
        if not budget.can_afford(epsilon, delta):
            raise BudgetExceededError(
                f"refused an IC run of (epsilon={epsilon}, delta={delta}): the budget has "
                f"({budget.remaining_epsilon:.6g}, {budget.remaining_delta:.3g}) left; "
                "nothing was released"
            )
        if delta > 0:
            budget.charge(epsilon, delta, label=f"IC run ({2 * rounds} steps at eps0={eps0:.3g})")
    step_budget = budget if delta == 0 else None

    p, n = data.histogram(), data.n
    true = workload._answer(p)
    pick = DISTINGUISHERS[distinguisher]
    state = dua.initial()
    info = {"rounds": rounds, "bound": bound, "eps0": eps0, "dua": dua.name}
    result = Result(dua.synthetic(state), np.empty(0), info=info)
    for t in range(1, rounds + 1):
        current = dua.answers(state, workload)
        if distinguisher == "exponential" and step_budget is not None:
            step_budget.charge(eps0, label=f"IC round {t}: distinguisher")
        i = pick(true, current, n=n, epsilon=eps0, rng=gen)
        v = laplace(true[i], sensitivity=1 / n, epsilon=eps0, rng=gen, budget=step_budget)
        stop = abs(v - current[i]) < 3 * alpha / 4
        if not stop:
            state = dua.update(state, workload.query(i), v)
        synthetic = dua.synthetic(state)
        error = float(np.max(np.abs(dua.answers(state, workload) - true)))
        potential = (
            kl_divergence(p, synthetic) if isinstance(dua, MultiplicativeWeightsDUA) else math.nan
        )
        result.trace.append(Round(t, query=i, noisy_value=float(v), updated=not stop,
                                  max_error=error, potential=potential,
                                  epsilon_spent=2 * t * eps0))  # fmt: skip
        if stop:
            break
    result.synthetic = dua.synthetic(state)
    result.answers = dua.answers(state, workload)
    result.info["updates"] = sum(r.updated for r in result.trace)
    if isinstance(dua, HalvingDUA):
        result.info["survivors"] = int(np.sum(state))
    return result
