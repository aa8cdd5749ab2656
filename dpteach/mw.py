"""Multiplicative weights over the universe X (Nikolov, CSC2412, "Private Multiplicative Weights").

The learner keeps a synthetic histogram ``p_hat`` (uniform at first). On a mistake, a query
``q`` with ``q(p_hat) - q(p) > alpha``, it sets ``p_hat'(x) ∝ p_hat(x) exp(-eta q(x))`` with the
lecture's ``eta = alpha``; the potential ``D(p || p_hat)`` then falls by at least ``alpha^2/4``
(the lecture's fact 3; in fact by more than ``alpha^2/2``), so there are at most
``4 ln|X| / alpha^2`` mistakes. The workload is closed under negation, so an answer that is too
*low* for ``q`` is a mistake on ``1 - q``.

This module holds the learner (:func:`learn`), the lecture's offline private MW
(:func:`private_mw`, pure or approximate DP), the practical MWEM-style variant of Hardt, Ligett
and McSherry 2012 (:func:`mwem`) and Hardt and Rothblum's online private MW with sparse vector
(:class:`OnlinePMW`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence

import numpy as np

from . import _validate as check
from . import theory
from .data import Dataset
from .domain import same_universe
from .mechanisms import (
    Sparse,
    _exponential,
    _laplace,
    _safe_laplace_grid,
)
from .privacy import (
    BudgetExceededError,
    PrivacyBudget,
    ZCDPBudget,
    _advanced_composition,
    _charge,
    check_budget,
)
from .queries import MarginalWorkload, NegatedWorkload, Workload, mw_update
from .results import Result, Round, kl_divergence
from .theory import mw_mistake_bound as mistake_bound

Seed = np.random.Generator | int


def _closed(workload: Workload) -> NegatedWorkload:
    if not isinstance(workload, Workload):
        raise TypeError(f"workload must be a Workload, got {type(workload).__name__}")
    return workload if isinstance(workload, NegatedWorkload) else workload.with_negations()


def _alpha(alpha: object) -> float:
    alpha = check.positive(alpha, "alpha")
    if alpha >= 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return alpha


def _uniform(size: int) -> np.ndarray:
    check.dense_size(size)
    return np.full(size, 1.0 / size)


#: :func:`learn` refuses an ``alpha`` whose mistake bound exceeds this many rounds unless its
#: ``max_rounds`` is raised (each round evaluates the whole workload).
MAX_LEARNER_ROUNDS = 100_000


def check_rounds(rounds: float, max_rounds: object, cause: str) -> int:
    """``rounds`` if at most ``max_rounds`` (a positive integer), else a ``ValueError`` naming the
    ``cause`` and the opt-in: the round limit of :func:`learn`, :func:`private_mw` and
    :func:`dpteach.iterative.iterative_construction`, checked before anything is charged."""
    max_rounds = check.integer(max_rounds, "max_rounds", minimum=1)
    if rounds > max_rounds:
        shown = check.count(math.ceil(rounds)) if math.isfinite(rounds) else "over 10^308"
        raise ValueError(
            f"{cause} needs {shown} rounds (each at epsilon/(2 x rounds) when "
            f"private), more than max_rounds={max_rounds:,}: choose a larger alpha, or pass a "
            "larger max_rounds to opt in to the long run"
        )
    return math.ceil(rounds)


def learn(
    p: object,
    workload: Workload,
    *,
    alpha: float,
    adversary: str = "worst",
    rng: Seed = 0,
    snapshots: Sequence[int] = (),
    max_rounds: int = MAX_LEARNER_ROUNDS,
) -> Result:
    """The (non-private) MW learner against an adversary that reveals mistakes.

    While some query of the negation-closed workload has ``q(p_hat) - q(p) > alpha``, the
    adversary reveals one — the ``"worst"`` (largest gap), the ``"smallest"`` gap above alpha
    (the slowest progress), or a ``"random"`` one — and the learner updates with the lecture's
    ``eta = alpha``. The trace records the potential ``D(p || p_hat_t)`` after each mistake; the
    number of mistakes is at most :func:`dpteach.theory.mw_mistake_bound`.

    A run whose mistake bound ``4 ln|X| / alpha^2`` exceeds ``max_rounds`` (default
    :data:`MAX_LEARNER_ROUNDS`, 100,000: each round evaluates the whole workload) is refused
    before it starts; pass a larger ``max_rounds`` to opt in to a longer run.
    """
    closed = _closed(workload)
    p = check.histogram(p, closed.domain_size, "p")
    alpha = _alpha(alpha)
    check_rounds(mistake_bound(closed.domain_size, alpha), max_rounds,
                 f"alpha={alpha:g} (mistake bound 4 ln|X| / alpha^2)")  # fmt: skip
    if adversary not in ("worst", "smallest", "random"):
        raise ValueError(f"adversary must be 'worst', 'smallest' or 'random', got {adversary!r}")
    snapshots = check.snapshots(snapshots)
    gen = check.rng(rng)
    true = closed._answer(p)
    p_hat = _uniform(closed.domain_size)
    bound = mistake_bound(closed.domain_size, alpha)
    gaps = closed._answer(p_hat) - true
    trace = [Round(0, max_error=float(np.max(np.abs(gaps))), potential=kl_divergence(p, p_hat))]
    kept: dict[int, np.ndarray] = {}
    _snapshot(kept, 0, p_hat, snapshots)
    while True:
        mistakes = np.flatnonzero(gaps > alpha)
        if mistakes.size == 0:
            break
        if len(trace) > bound:  # impossible by the theorem: a bug if it ever happens
            raise RuntimeError("the MW learner exceeded its mistake bound")
        if adversary == "worst":
            i = int(mistakes[np.argmax(gaps[mistakes])])
        elif adversary == "smallest":
            i = int(mistakes[np.argmin(gaps[mistakes])])
        else:
            i = int(gen.choice(mistakes))
        p_hat = closed._reweight(p_hat, i, alpha)  # p_hat is ours: it may be updated in place
        gaps = closed._answer(p_hat) - true
        trace.append(Round(len(trace), query=i, updated=True,
                           max_error=float(np.max(np.abs(gaps))),
                           potential=kl_divergence(p, p_hat)))  # fmt: skip
        _snapshot(kept, len(trace) - 1, p_hat, snapshots)
    answers = workload._answer(p_hat)
    return Result(p_hat, answers, trace, kept, info={"alpha": alpha, "mistake_bound": bound})


def _snapshot(result_snapshots: dict, t: int, p_hat: np.ndarray, wanted: Collection[int]) -> None:
    """Keep a copy of ``p_hat`` as round ``t``'s snapshot if ``t`` is wanted (``wanted`` validated
    by ``check.snapshots``; ``p_hat`` may later change in place, hence the copy)."""
    if t in wanted:
        result_snapshots[t] = p_hat.copy()


def _prepare(data: Dataset, workload: Workload) -> tuple[np.ndarray, int]:
    same_universe(Dataset.check(data), Workload.check(workload))
    return data.histogram(), data.n


def private_mw(
    data: Dataset,
    workload: Workload,
    *,
    epsilon: float,
    alpha: float,
    rng: Seed,
    delta: float = 0.0,
    budget: PrivacyBudget | ZCDPBudget | None = None,
    snapshots: Sequence[int] = (),
    max_rounds: int = MAX_LEARNER_ROUNDS,
) -> Result:
    """Offline private multiplicative weights: the lecture's "algorithm in detail".

    ``L = ceil(4 ln|X| / alpha^2)`` rounds at ``eps_0`` each step. In round ``t``:

    1. select ``q_t`` from the negation-closed workload with the exponential mechanism, score
       ``q(p_hat_t) - q(p)`` (sensitivity ``1/n``), at ``eps_0``;
    2. measure ``Y_t = q_t(p) + Lap(1 / (eps_0 n))``;
    3. if ``q_t(p_hat_t) - Y_t > 2 alpha``, update ``p_hat`` with the lecture's ``eta = alpha``;
       otherwise stop and output ``p_hat_t``.

    Guarantee, replace-one neighbours: with ``delta = 0``, ``eps_0 = eps / (2L)`` and the run is
    ``epsilon``-DP (basic composition of at most ``2L`` ``eps_0``-DP steps; stopping early only
    spends less); with ``delta > 0`` (and ``epsilon <= 1``), ``eps_0 = eps / (2 sqrt(4L
    ln(1/delta)))`` and it is ``(epsilon, delta)``-DP (advanced composition, Dwork-Roth
    Cor. 3.21): see :func:`dpteach.theory.private_mw_epsilon0`. The budget is charged the whole
    ``(epsilon, delta)`` before the first step. With ``n`` at least
    :func:`dpteach.theory.private_mw_sample_size` every answer is within ``3 alpha`` w.p.
    ``1 - beta``; that ``n`` is about 4x the lecture's because we ask each noise to be at most
    ``alpha/2``, which the lecture's ``3 alpha`` needs (see that function). Below
    :func:`dpteach.theory.private_mw_onset` it learns nothing: the noise swamps every gap, and the
    run stops within a round or two, near the uniform histogram. An ``L`` above ``max_rounds``
    (default :data:`MAX_LEARNER_ROUNDS`) is refused before anything is charged; pass a larger
    ``max_rounds`` to opt in.
    """
    p, n = _prepare(data, workload)
    closed = _closed(workload)
    alpha = _alpha(alpha)
    epsilon = check.positive(epsilon, "epsilon")
    delta = check.delta(delta)
    snapshots = check.snapshots(snapshots)
    rounds = check_rounds(theory.private_mw_rounds(closed.domain_size, alpha), max_rounds,
                          f"alpha={alpha:g}")  # fmt: skip
    eps0 = theory._private_mw_epsilon0(epsilon, rounds, delta)
    gen = check.rng(rng)
    grid = _safe_laplace_grid(1 / n, eps0)  # refuses an unrepresentable eps0 before the charge
    # a ZCDPBudget is charged epsilon^2/2 for a pure run and refuses an approximate one
    _charge(check_budget(budget), epsilon, delta,
            label=f"private MW ({2 * rounds} steps at eps0={eps0:.3g})")  # fmt: skip

    def spent(steps: int) -> float:
        if delta == 0:
            return steps * eps0
        return min(steps * eps0, _advanced_composition(eps0, steps, delta)[0])

    true = closed._answer(p)
    p_hat = _uniform(closed.domain_size)
    answers_hat = closed._answer(p_hat)
    info = {"rounds": rounds, "eps0": eps0, "alpha": alpha, "delta": delta}
    result = Result(p_hat, np.empty(0), info=info)
    _snapshot(result.snapshots, 0, p_hat, snapshots)
    for t in range(1, rounds + 1):
        i = _exponential(answers_hat - true, 1 / n, eps0, gen)  # checked values: internal paths
        y = _laplace(true[i], grid, gen)
        update = answers_hat[i] - y > 2 * alpha
        if update:
            p_hat = closed._reweight(p_hat, i, alpha)  # p_hat is ours: it may change in place
            answers_hat = closed._answer(p_hat)
        result.trace.append(
            Round(t, query=i, noisy_value=y, updated=bool(update),
                  max_error=float(np.max(np.abs(answers_hat - true))),
                  potential=kl_divergence(p, p_hat), epsilon_spent=spent(2 * t))
        )  # fmt: skip
        _snapshot(result.snapshots, t, p_hat, snapshots)
        if not update:
            break
    result.synthetic, result.answers = p_hat, workload._answer(p_hat)
    return result


#: Largest number of rounds :func:`mwem` accepts. Each round evaluates the whole workload once and
#: keeps a :class:`~dpteach.results.Round`; at ``eps / (2T)`` per step, more rounds than this
#: only add noise (each measurement's noise grows like ``T``) and time.
MAX_ROUNDS = 10_000

#: Largest number of MW passes per round :func:`mwem` accepts (each pass costs about four
#: passes over the histogram per measured marginal).
MAX_ITERATIONS = 10_000


def mwem_rounds(n: int, epsilon: float, workload: Workload) -> int:
    """MWEM's default number of rounds: ``T = round(0.6 (n eps)^(1/3))``, at least 1 and at
    most the number of selectable items (marginals, or queries) of ``workload``.

    More rounds measure more of the workload, but each measurement's noise grows like ``T``
    (``eps / (2T)`` per step): the error first falls, then rises. On the latent-class benchmark of
    ``benchmarks/bench_mwem.py`` (8 binary attributes, all 84 two- and three-way marginals,
    ``n eps`` from 1,000 to 20,000, 6 seeds each) the best fixed ``T`` grows like
    ``(n eps)^(1/3)`` (5-8 rounds at ``n eps = 1,000``, 8 at 2,500, 12 at 5,000 and 10,000, 18
    at 20,000), and this rule is within the seeds' noise of it. HLM12's worst-case bound balances at
    ``(n eps)^(2/3)``, which is far too many rounds in practice. Uses public quantities only.
    """
    n = check.integer(n, "n", minimum=1)
    epsilon = check.positive(epsilon, "epsilon")
    return _mwem_rounds(n, epsilon, Workload.check(workload))


def _mwem_rounds(n: int, epsilon: float, workload: Workload) -> int:
    """:func:`mwem_rounds` for checked values (what :func:`mwem` calls)."""
    items = len(workload.marginals) if isinstance(workload, MarginalWorkload) else workload.k
    return int(min(max(round(0.6 * (n * epsilon) ** (1 / 3)), 1), items, MAX_ROUNDS))


def _rounds(rounds: object) -> int:
    rounds = check.integer(rounds, "rounds", minimum=1)
    if rounds > MAX_ROUNDS:
        raise ValueError(
            f"rounds must be at most {MAX_ROUNDS:,} (mw.MAX_ROUNDS), got {rounds:,}: every round "
            "evaluates the whole workload and keeps a trace entry, and at eps/(2T) per step more "
            "rounds only add noise; use rounds=None for the default"
        )
    return rounds


def mwem(
    data: Dataset,
    workload: Workload,
    *,
    epsilon: float,
    rng: Seed,
    rounds: int | None = None,
    iterations: int = 20,
    budget: PrivacyBudget | ZCDPBudget | None = None,
    snapshots: Sequence[int] = (),
) -> Result:
    """MWEM (Hardt, Ligett and McSherry 2012): select, measure, multiplicative weights.

    A fixed number ``T`` of rounds (``rounds=None``: :func:`mwem_rounds`, chosen from ``n``,
    ``epsilon`` and the workload), each spending ``eps / (2T)`` on selection and ``eps / (2T)``
    on measurement. For a :class:`~dpteach.queries.MarginalWorkload` a whole marginal is selected
    (exponential mechanism, score ``||M(p_hat) - M(p)||_1``, sensitivity ``2/n``) and all its cells
    are measured with Laplace noise (L1 sensitivity ``2/n``); for other workloads one query is
    selected (score ``|q(p_hat) - q(p)|``, sensitivity ``1/n``) and measured (sensitivity ``1/n``).
    After each measurement, ``iterations`` passes of the MW rule
    ``p_hat(x) ∝ p_hat(x) exp(q(x) (y - q(p_hat)) / 2)`` over all measurements so far. A marginal
    (or query) measured ``r`` times enters each pass once, with the mean ``y_bar`` of its
    measurements and the sum of their steps, ``r (y_bar - q(p_hat)) / 2``: a pass costs one update
    per *distinct* measured item, whatever the number of rounds.

    Guarantee: ``epsilon``-DP under replace-one neighbours (basic composition of ``2T`` steps at
    ``eps/(2T)``; the MW passes are post-processing; ``n`` is public). The budget is charged the
    whole ``epsilon`` after validation and before the first step. Unlike :func:`private_mw` it
    carries no worst-case accuracy theorem; it is what one runs in practice.

    The trace's ``max_error`` and ``potential`` are non-private diagnostics; ``max_error`` reuses
    the evaluation of the workload that the next round's selection needs, so it costs nothing.
    ``snapshots`` lists rounds whose ``p_hat`` is kept (0 for the uniform start). ``rounds`` is at
    most :data:`MAX_ROUNDS` and ``iterations`` at most :data:`MAX_ITERATIONS`.
    """
    same_universe(Dataset.check(data), Workload.check(workload))
    n = data.n
    epsilon = check.positive(epsilon, "epsilon")
    rounds = _mwem_rounds(n, epsilon, workload) if rounds is None else _rounds(rounds)
    iterations = check.integer(iterations, "iterations", minimum=1)
    if iterations > MAX_ITERATIONS:
        raise ValueError(
            f"iterations must be at most {MAX_ITERATIONS:,} (mw.MAX_ITERATIONS), got "
            f"{iterations:,}: each costs a pass over the histogram per measured marginal"
        )
    wanted = _wanted_snapshots(snapshots, rounds, workload.domain_size)
    check.dense_size(workload.domain_size)
    gen = check.rng(rng)
    eps_t = epsilon / (2 * rounds)
    by_marginal = isinstance(workload, MarginalWorkload)
    if by_marginal:
        starts = workload._offsets[:-1]
        sensitivity = 2 / n
    else:
        starts = np.arange(workload.k)
        sensitivity = 1 / n
    ends = np.append(starts[1:], workload.k)
    # every measurement's noise grid, refused (public values only) before the charge
    grids = {int(k): _safe_laplace_grid(sensitivity, eps_t, k=int(k)) for k in set(ends - starts)}
    _charge(check_budget(budget), epsilon, label=f"MWEM ({2 * rounds} steps at {eps_t:.3g})")
    p = data.histogram()
    true = workload._answer(p)
    support = np.flatnonzero(p)
    p_hat = _uniform(workload.domain_size)
    answers = workload._answer(p_hat)
    totals: dict[int, np.ndarray] = {}  # item -> sum of its measurements
    counts: dict[int, int] = {}
    info = {"rounds": rounds, "eps_per_step": eps_t, "iterations": iterations}
    result = Result(p_hat, np.empty(0), info=info)
    _snapshot(result.snapshots, 0, p_hat, wanted)
    for t in range(1, rounds + 1):
        scores = np.add.reduceat(np.abs(answers - true), starts)
        # the validated values go to the mechanisms' internal paths (issue 27: validate once)
        m = _exponential(scores, sensitivity, eps_t, gen)
        y = _laplace(true[starts[m] : ends[m]], grids[ends[m] - starts[m]], gen)
        totals[m] = totals.get(m, 0) + y
        counts[m] = counts.get(m, 0) + 1
        measured = [(i, totals[i] / counts[i], counts[i]) for i in totals]
        for _ in range(iterations):
            p_hat = _mw_pass(p_hat, workload, measured, by_marginal)
        answers = workload._answer(p_hat)  # the trace's and the next selection's evaluation
        result.trace.append(
            Round(t, query=m, noisy_value=float(y[0]), updated=True,
                  max_error=float(np.max(np.abs(answers - true))),
                  potential=_potential(p, p_hat, support), epsilon_spent=2 * t * eps_t)
        )  # fmt: skip
        _snapshot(result.snapshots, t, p_hat, wanted)
    result.synthetic, result.answers = p_hat, answers
    return result


def _wanted_snapshots(snapshots: object, rounds: int, size: int) -> frozenset[int]:
    """The rounds to keep ``p_hat`` at: round numbers in ``0..rounds``, whose copies fit the
    dense-size limit."""
    wanted = check.snapshots(snapshots)
    if wanted and max(wanted) > rounds:
        raise ValueError(f"snapshots must lie in 0..{rounds} (the rounds), got {max(wanted)}")
    check.dense_size(len(wanted) * size, "the snapshots")
    return wanted


def _potential(p: np.ndarray, p_hat: np.ndarray, support: np.ndarray) -> float:
    """``D(p || p_hat)`` summed over the support of ``p`` only (cheap when the data are sparse)."""
    mass, model = p[support], p_hat[support]
    if np.any(model == 0):
        return float("inf")
    return float(np.sum(mass * (np.log(mass) - np.log(model))))


def _mw_pass(
    p_hat: np.ndarray,
    workload: Workload,
    measured: list[tuple[int, np.ndarray, int]],
    by_marginal: bool,
) -> np.ndarray:
    """One pass of the HLM12 update over every distinct measured item (post-processing).

    HLM12 applies ``p_hat(x) <- p_hat(x) exp(q(x) (y - q(p_hat)) / 2) / Z`` for each measurement
    ``(q, y)``; an item measured ``r`` times, with mean ``y_bar``, gets the sum of its ``r``
    exponents in one step, ``r (y_bar - q(p_hat)) / 2``.

    A marginal's update is one :meth:`~dpteach.queries.MarginalWorkload.reweight` of ``p_hat``
    in place, from its table (about three passes over X, stable for any noisy ``y``); another
    workload's query uses :func:`mw_update` with its dense vector.
    """
    for m, y, r in measured:
        if by_marginal:
            table = workload.table(p_hat, m)
            workload._scale(p_hat, m, 0.5 * r * (y.reshape(table.shape) - table), table)
        else:
            q = workload._query(m)
            p_hat = mw_update(p_hat, q, -0.5 * r * (y[0] - q @ p_hat))
    return p_hat


class OnlinePMW:
    """Online private multiplicative weights (Hardt and Rothblum 2010), for an adaptive analyst.

    The curator keeps a public synthetic histogram ``p_hat`` (uniform at first). For each query
    ``q`` the analyst asks, a sparse-vector test compares the error ``|q(p) - q(p_hat)|``
    (sensitivity ``1/n``) with the threshold ``alpha``:

    * *easy* (below): the answer is ``q(p_hat)``, computed from public information only;
    * *hard* (above): the answer is ``Y = q(p) + Lap(...)``, and ``p_hat`` takes an MW step
      (``eta = alpha/2``) towards ``Y``.

    At most ``c`` hard queries are allowed (default ``ceil(8 ln|X| / alpha^2)``, the potential
    argument's bound when the noise is at most ``alpha/4``); then the mechanism halts and
    further queries raise :class:`~dpteach.privacy.BudgetExceededError`.

    Guarantee: ``epsilon``-DP under replace-one neighbours, for any adaptively chosen sequence of
    queries: ``eps/2`` for the sparse vector (Dwork-Roth Thm 3.25, cutoff ``c``) and ``eps/(2c)``
    for each of at most ``c`` Laplace answers (basic composition). The whole ``epsilon`` is charged
    to ``budget`` on construction. The data are held privately: the object exposes only
    ``p_hat``, the answers and public counts.
    """

    def __init__(
        self,
        data: Dataset,
        *,
        epsilon: float,
        alpha: float,
        rng: Seed,
        max_hard: int | None = None,
        budget: PrivacyBudget | ZCDPBudget | None = None,
    ):
        Dataset.check(data)
        self.alpha = _alpha(alpha)
        self.epsilon = check.positive(epsilon, "epsilon")
        size = data.domain.size
        default = max(1, math.ceil(2 * mistake_bound(size, self.alpha)))  # |X| = 1: bound 0
        self.max_hard = (
            default if max_hard is None else check.integer(max_hard, "max_hard", minimum=1)
        )
        gen = check.rng(rng)
        n = data.n
        check_budget(budget)
        check.dense_size(size)
        # built first (it validates and draws nothing), and the answers' grid checked, then the
        # whole epsilon is charged: nothing may refuse after the charge
        try:
            self._sparse = Sparse._checked(self.alpha, sensitivity=1 / n,
                                           epsilon=self.epsilon / 2, rng=gen,
                                           cutoff=self.max_hard)  # fmt: skip
            answer_grid = _safe_laplace_grid(1 / n, self.epsilon / (2 * self.max_hard))
        except ValueError as err:
            cause = "max_hard" if max_hard is not None else f"alpha={self.alpha:g} (via max_hard)"
            raise ValueError(
                f"online PMW cannot calibrate its noise: epsilon={self.epsilon:g} split over "
                f"max_hard={self.max_hard:,} hard queries is too little ({err}). Raise epsilon or "
                f"lower {cause}"
            ) from None
        _charge(budget, self.epsilon, label=f"online PMW (c={self.max_hard})")
        self._rng = gen
        p = data.histogram()
        self._true_answer: Callable[[np.ndarray], float] = lambda q: float(q @ p)
        self._answer_grid = answer_grid  # Lap(1 / (n eps/(2c))) per hard answer, safe
        self.p_hat = _uniform(size)
        self.hard = 0
        self.asked = 0
        self.history: list[tuple[float, bool]] = []

    @property
    def halted(self) -> bool:
        """True once ``max_hard`` hard queries were answered."""
        return self._sparse.halted

    def answer(self, q: object) -> float:
        """Answer the linear query ``q`` (a vector over X with entries in [0, 1])."""
        q = check.array(q, "q", ndim=1)
        if q.shape != self.p_hat.shape or np.any((q < 0) | (q > 1)):
            raise ValueError(f"q must have length {self.p_hat.size} and entries in [0, 1]")
        if self.halted:
            raise BudgetExceededError(
                f"online PMW halted after {self.max_hard} hard queries; nothing was released"
            )
        estimate = float(q @ self.p_hat)
        self.asked += 1
        hard = self._sparse.test(abs(self._true_answer(q) - estimate))
        if not hard:
            self.history.append((estimate, False))
            return estimate
        self.hard += 1
        y = _laplace(self._true_answer(q), self._answer_grid, self._rng)
        self.p_hat = mw_update(self.p_hat, q, math.copysign(self.alpha / 2, estimate - y))
        self.history.append((float(y), True))
        return float(y)
