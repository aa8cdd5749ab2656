"""Iterative database construction (Roth, Lecture 7; Gupta, Roth and Ullman 2012).

A *database update algorithm* (DUA) keeps a synthetic database ``D^t``, starting from
``U(empty, ., .)``; given a query ``q`` on which ``D^t`` is wrong and an estimate ``v`` of the
true value, it returns ``D^{t+1} = U(D^t, q, v)``. It is a ``B(alpha)``-DUA (Definition 2) if
every ``(U, D, C, alpha, L)``-database update sequence (Definition 1: each ``q_t`` has
``|q_t(D) - q_t(D^t)| >= alpha`` and each ``v_t`` has ``|q_t(D) - v_t| < alpha``) has
``L <= B(alpha)``. A *private distinguisher* (Definition 3) finds such a query privately. The IC
mechanism (Algorithm 1) alternates the two for ``B(alpha/2)`` rounds: its update sequence is
one at level ``alpha/2``.

Two DUAs: :class:`MultiplicativeWeightsDUA` (``B(a) = 4 ln|X| / a^2``) and the halving update
over small candidate databases, :class:`dpteach.median.HalvingDUA` (``B = log2 |C|``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from . import _validate as check
from .data import Dataset
from .domain import same_universe
from .mechanisms import _exponential, _laplace, _safe_laplace_grid, exponential
from .median import HalvingDUA
from .mw import MAX_LEARNER_ROUNDS, check_rounds, mw_update
from .privacy import (
    BudgetExceededError,
    PrivacyBudget,
    ZCDPBudget,
    _advanced_composition,
    _can_afford,
    _charge,
    check_budget,
)
from .queries import Workload
from .results import Result, Round, kl_divergence
from .theory import _ic_epsilon0, mw_mistake_bound


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
    """Multiplicative weights as a ``B(alpha)``-DUA for update sequences at level ``alpha``.

    ``D^0`` is uniform over X; on ``(q, v)``, ``D^{t+1}(x) ∝ D^t(x) exp(eta q(x))`` if
    ``v > q(D^t)`` and ``∝ D^t(x) exp(-eta q(x))`` otherwise, with ``eta = alpha / 2``.

    Update bound ``B(alpha) = 4 ln|X| / alpha^2``, for ``alpha`` the level this DUA is built for
    (a step size suits one level, so :meth:`bound` refuses any other). Proof: in a sequence at
    level ``alpha``, ``v`` is within ``alpha`` of ``q(D)`` and ``q(D^t)`` at least ``alpha`` away,
    so ``v`` is on ``q(D)``'s side and the step goes the right way; with ``e^{-y} <= 1 - y + y^2``
    (``0 <= y <= 1``) and ``ln(1 + z) <= z``, the potential ``D(D || D^t)`` falls by at least
    ``eta |q(D) - q(D^t)| - eta^2 >= alpha^2 / 4``; it starts at most ``ln|X|`` and is never
    negative. (Hoeffding's lemma gives the sharper fall ``eta |q(D) - q(D^t)| - eta^2 / 8``.)

    In the IC mechanism at accuracy ``alpha`` the sequence is at level ``alpha / 2``: build the
    DUA with ``alpha / 2`` (the IC mechanism raises an error otherwise).
    """

    name = "multiplicative weights"

    def __init__(self, domain_size: int, *, alpha: float):
        self.domain_size = check.integer(domain_size, "domain_size", minimum=2)
        self.alpha = check.positive(alpha, "alpha")
        if self.alpha >= 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        self.eta = self.alpha / 2

    def bound(self, alpha: float) -> float:
        """``B(alpha) = 4 ln|X| / alpha^2``; ``alpha`` must be the level the DUA is built for."""
        alpha = check.positive(alpha, "alpha")
        if not math.isclose(alpha, self.alpha, rel_tol=1e-9):
            raise ValueError(
                f"this MultiplicativeWeightsDUA is built for update sequences at level "
                f"alpha={self.alpha:g} (step eta={self.eta:g}); its bound at level {alpha:g} is "
                f"not 4 ln|X|/alpha^2. The IC mechanism at accuracy alpha runs it at level "
                f"alpha/2: build MultiplicativeWeightsDUA({self.domain_size}, alpha={alpha:g})"
            )
        return mw_mistake_bound(self.domain_size, alpha)

    def initial(self) -> np.ndarray:
        check.dense_size(self.domain_size)
        return np.full(self.domain_size, 1.0 / self.domain_size)

    def answers(self, state: np.ndarray, workload: Workload) -> np.ndarray:
        return workload._answer(state)

    def update(self, state: np.ndarray, q: np.ndarray, v: float) -> np.ndarray:
        direction = -1.0 if v > q @ state else 1.0
        return mw_update(state, q, direction * self.eta)

    def synthetic(self, state: np.ndarray) -> np.ndarray:
        return state


_DUA_METHODS = ("bound", "initial", "answers", "update", "synthetic")


def _check_dua(dua: object) -> None:
    """A database update algorithm: ``domain_size`` and the protocol's methods."""
    missing = [m for m in _DUA_METHODS if not callable(getattr(dua, m, None))]
    if missing or not hasattr(dua, "domain_size"):
        raise TypeError(
            f"dua must be a database update algorithm (e.g. MultiplicativeWeightsDUA or "
            f"median.HalvingDUA, with domain_size and {', '.join(_DUA_METHODS)}), got "
            f"{type(dua).__name__}"
        )


def exponential_distinguisher(
    true: np.ndarray, synthetic: np.ndarray, *, n: int, epsilon: float, rng, size=None
) -> int | np.ndarray:
    """The exponential mechanism as a private distinguisher (Lecture 7, Theorem 6): quality
    ``|q(D) - q(D^t)|``, sensitivity ``1/n`` under replace-one neighbours; ``epsilon``-DP. With
    probability ``1 - gamma`` it loses at most ``F = 2 ln(k/gamma) / (n epsilon)`` against the
    best of the ``k`` queries. ``size`` draws that many independent choices (for simulation:
    each is a separate ``epsilon``-DP release)."""
    n = check.integer(n, "n", minimum=1)
    true, synthetic = check.array(true, "true", ndim=1), check.array(synthetic, "synthetic", ndim=1)
    if true.shape != synthetic.shape:
        raise ValueError(
            f"true and synthetic must hold the same queries' answers, got {true.size} and "
            f"{synthetic.size}"
        )
    scores = np.abs(true - synthetic)
    return exponential(scores, sensitivity=1 / n, epsilon=epsilon, rng=rng, size=size)


def exact_distinguisher(true: np.ndarray, synthetic: np.ndarray, **_) -> int:
    """The worst query exactly: NOT private, for contrast."""
    return int(np.argmax(np.abs(true - synthetic)))


DISTINGUISHERS = {"exponential": exponential_distinguisher, "exact": exact_distinguisher}


def _exponential_pick(true: np.ndarray, synthetic: np.ndarray, *, n: int, epsilon: float, rng):
    """:func:`exponential_distinguisher` on checked values (one draw): what the IC mechanism's
    rounds call."""
    return _exponential(np.abs(true - synthetic), 1 / n, epsilon, rng)


#: The distinguishers as :func:`iterative_construction` calls them, on checked values.
_PICKS = {"exponential": _exponential_pick, "exact": exact_distinguisher}


def privacy_spent(eps0: float, steps: int, delta: float = 0.0) -> float:
    """The ``epsilon`` of ``steps`` adaptive ``eps0``-DP steps, as Theorem 4 accounts for them.

    ``delta = 0``: basic composition, ``steps * eps0`` (pure DP). ``delta > 0``: the ``epsilon``
    of an ``(epsilon, delta)`` guarantee, the smaller of basic composition (``delta = 0``, so
    also a valid ``(., delta)`` bound) and advanced composition at ``delta'`` = ``delta``
    (Dwork-Roth Thm 3.20, the form in the proof of Theorem 4). After all ``2B`` steps this is at
    most the run's ``epsilon``.
    """
    eps0 = check.positive(eps0, "eps0")
    steps = check.integer(steps, "steps", minimum=0)
    return _privacy_spent(eps0, steps, check.delta(delta))


def _privacy_spent(eps0: float, steps: int, delta: float) -> float:
    """:func:`privacy_spent` for checked values."""
    if steps == 0:
        return 0.0
    basic = steps * eps0
    if delta == 0:
        return basic
    return min(basic, _advanced_composition(eps0, steps, delta)[0])


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
    budget: PrivacyBudget | ZCDPBudget | None = None,
    snapshots: Sequence[int] = (),
    max_rounds: int = MAX_LEARNER_ROUNDS,
) -> Result:
    """The Iterative Construction mechanism (Lecture 7, Algorithm 1).

    ``D^0 = U(empty)``. For ``t = 1 .. B``, ``B = ceil(B(alpha/2))``: the distinguisher picks
    ``q_t`` (exponential mechanism at ``eps_0``, quality ``|q(D) - q(D^{t-1})|``); estimate
    ``v_t = q_t(D) + Lap(1/(eps_0 n))``; if ``|v_t - q_t(D^{t-1})| < 3 alpha / 4`` stop and output
    ``D^{t-1}``, else ``D^t = U(D^{t-1}, q_t, v_t)``. The DUA must be one for update sequences
    at level ``alpha/2`` (a :class:`MultiplicativeWeightsDUA` built with ``alpha/2``; the
    halving DUA needs a candidate within ``alpha/2`` of ``D``, Lecture 4's Claim 1).

    Guarantee (Theorem 4), replace-one neighbours, sensitivity ``1/n`` for the distinguisher's
    quality and the estimate: with ``eps_0 = eps / (2B)`` it is ``eps``-DP (basic composition of
    ``2B`` steps); with ``eps_0 = eps / (4 sqrt(B ln(1/delta)))`` it is ``(eps, delta)``-DP
    (advanced composition). Stopping early only releases less. Pure DP: ``budget`` must afford
    the whole ``eps`` (checked before anything is released) and is charged ``eps_0`` per step as
    the run goes (a :class:`~dpteach.privacy.ZCDPBudget`: ``eps_0^2/2`` per step, all ``2B``
    affordable first); approximate DP: charged ``(eps, delta)`` once, before the first step (a
    ``ZCDPBudget`` refuses it). ``B`` above ``max_rounds`` (default
    :data:`dpteach.mw.MAX_LEARNER_ROUNDS`, 100,000) is refused before anything is charged: pass a
    larger ``max_rounds`` to opt in. The trace's
    ``epsilon_spent`` is :func:`privacy_spent` of the steps so far (at the run's ``delta``).
    ``distinguisher="exact"`` is not private (its ``epsilon_spent`` is ``inf``; it refuses a
    ``budget``).
    ``snapshots`` lists rounds ``t`` whose ``D^t`` (as a histogram) is kept, ``0`` for ``D^0``.
    Non-private diagnostics for teaching: the trace's true max error and, for the MW DUA, the KL
    potential ``D(D || D^t)``; ``info`` holds them for ``D^0`` and, for the halving DUA, the
    number of surviving candidates after each round.
    """
    same_universe(Dataset.check(data), Workload.check(workload))
    _check_dua(dua)
    if workload.domain_size != dua.domain_size:
        raise ValueError(
            f"data and workload ({workload.domain_size} cells) and dua ({dua.domain_size} cells) "
            "must share one universe"
        )
    check_budget(budget)
    alpha = check.positive(alpha, "alpha")
    epsilon = check.positive(epsilon, "epsilon")
    delta = check.delta(delta)
    if distinguisher not in DISTINGUISHERS:
        raise ValueError(f"distinguisher must be one of {sorted(DISTINGUISHERS)}")
    if distinguisher == "exact" and budget is not None:
        raise ValueError("distinguisher='exact' is not private and cannot be charged to a budget")
    gen = check.rng(rng)
    bound = dua.bound(alpha / 2)  # the MW DUA refuses a level other than its own
    rounds = check_rounds(bound, max_rounds, f"alpha={alpha:g} (update bound B(alpha/2))")
    eps0 = _ic_epsilon0(epsilon, rounds, delta)
    if delta > 0 and _privacy_spent(eps0, 2 * rounds, delta) > epsilon:
        raise ValueError(
            f"epsilon={epsilon} is too large for advanced composition here; use delta=0"
        )
    grid = _safe_laplace_grid(1 / data.n, eps0)  # refuses an unrepresentable eps0 before a charge
    label = f"IC run ({2 * rounds} steps at eps0={eps0:.3g})"
    # the values are checked: the rounds take the internal paths (issue 27: validate once)
    if delta > 0:  # one (epsilon, delta) charge (a ZCDPBudget refuses it: no zCDP guarantee)
        _charge(budget, epsilon, delta, label=label)
    elif budget is not None:
        # pure DP: the whole run must be affordable before anything is released; each step is
        # then charged as it goes (eps0, or eps0^2/2 to a ZCDPBudget)
        whole_rho = 2 * rounds * (eps0 * eps0 / 2)  # what the 2B steps cost a ZCDPBudget
        if not _can_afford(budget, epsilon, rho=whole_rho):
            raise BudgetExceededError(
                f"refused an {label} of (epsilon={epsilon}, delta={delta}): the budget cannot "
                f"pay it ({budget!r}); nothing was released"
            )
    step_budget = budget if delta == 0 else None
    private = distinguisher != "exact"

    p, n = data.histogram(), data.n
    true = workload._answer(p)
    pick = _PICKS[distinguisher]
    state = dua.initial()
    current = dua.answers(state, workload)  # D^{t-1}'s answers at the start of round t
    is_mw = isinstance(dua, MultiplicativeWeightsDUA)
    accounting = "basic composition" if delta == 0 else f"min(basic, advanced) at delta={delta:g}"
    info = {
        "rounds": rounds,
        "bound": bound,
        "eps0": eps0,
        "dua": dua.name,
        "accounting": accounting,
        "initial_max_error": float(np.max(np.abs(current - true))),
        "initial_potential": kl_divergence(p, dua.synthetic(state)) if is_mw else math.nan,
    }
    result = Result(dua.synthetic(state), np.empty(0), info=info)
    if 0 in snapshots:
        result.snapshots[0] = dua.synthetic(state).copy()
    halving = isinstance(dua, HalvingDUA)
    survivors = [int(np.sum(state))] if halving else []
    for t in range(1, rounds + 1):
        # the exact distinguisher has refused any budget
        _charge(step_budget, eps0, label=f"IC round {t}: distinguisher")
        i = pick(true, current, n=n, epsilon=eps0, rng=gen)
        _charge(step_budget, eps0, label="laplace")
        v = _laplace(true[i], grid, gen)
        stop = abs(v - current[i]) < 3 * alpha / 4
        if not stop:
            state = dua.update(state, workload.query(i), v)
            current = dua.answers(state, workload)
        synthetic = dua.synthetic(state)
        error = float(np.max(np.abs(current - true)))
        potential = kl_divergence(p, synthetic) if is_mw else math.nan
        spent = _privacy_spent(eps0, 2 * t, delta) if private else math.inf
        result.trace.append(Round(t, query=i, noisy_value=float(v), updated=not stop,
                                  max_error=error, potential=potential,
                                  epsilon_spent=spent))  # fmt: skip
        if t in snapshots:
            result.snapshots[t] = synthetic.copy()
        if halving:
            survivors.append(int(np.sum(state)))
        if stop:
            break
    result.synthetic = dua.synthetic(state)
    result.answers = current
    result.info["updates"] = sum(r.updated for r in result.trace)
    if halving:
        result.info["survivors"] = survivors[-1]
        result.info["survivors_by_round"] = survivors  # |C_t| for t = 0, 1, ...
    return result
