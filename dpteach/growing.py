"""Differential privacy for growing databases (Cummings, Krehbiel, Lai, Tantipongpipat 2018).

A :class:`~dpteach.streams.DatabaseStream` starts at size ``n0`` and gains one entry per step;
time ``t`` is also the size, so a linear query has sensitivity ``1/t``. Neighbouring streams
differ in one entry from its arrival onwards — possibly before ``n0``, so *every* run of a black
box sees the change: runs compose, there is no parallel composition across epochs.

* :func:`bb_scheduler` (Algorithm 1, Theorem 10): rerun a static ``eps``-DP black box at
  ``t_i = ceil(n0 (1+gamma)^i)`` with a geometrically shrinking budget, and answer every query of
  epoch ``i`` from run ``i``. :func:`smalldbg` (Theorem 9) is BBScheduler with SmallDB.
* :func:`bb_improver` (Algorithm 2, Theorem 13): rerun at every step with
  ``rho_t ∝ t^-(1+2c)``, so the accuracy improves as the data grow.
* :class:`PMWG` (Algorithm 3, Theorem 14): private multiplicative weights that also mixes its
  histogram with the uniform distribution on every arrival (Lemma 15), with a sparse-vector test
  calibrated to the sensitivity ``1/t`` at the start of each instance.

Black boxes follow one protocol (:class:`BlackBox`): ``box(data, workload, *, epsilon, beta,
rng)`` runs a static ``epsilon``-DP mechanism of the package on a :class:`~dpteach.data.Dataset`
and returns its output (a :class:`~dpteach.results.Result`, an array of answers, or for ERM a
parameter vector). The adapters below wrap the package's mechanisms, imported, never rewritten.

The paper's formulas were lost in our copy of its text: the schedules and bounds here are our
reconstruction (see :mod:`dpteach.theory`, "Growing databases", and notebook 05).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from scipy import special

from . import _validate as check
from . import baselines, mw, theory
from .data import Dataset
from .domain import same_universe
from .mechanisms import AboveThreshold, _laplace, _safe_laplace_grid
from .privacy import (
    BudgetExceededError,
    PrivacyBudget,
    ZCDPBudget,
    _can_afford,
    _charge,
    approx_dp_to_zcdp,
    can_afford,
    charge,
    check_budget,
)
from .queries import Workload
from .results import Result, Round
from .smalldb import smalldb
from .streams import DatabaseStream

Seed = np.random.Generator | int

# --- the black-box protocol and adapters ---------------------------------------------------------


class BlackBox(Protocol):
    """A static mechanism, ``epsilon``-DP under replace-one neighbours for every ``epsilon``.

    ``box(data, workload, *, epsilon, beta, rng)`` runs it once on ``data`` (``workload`` may be
    ``None`` for boxes that need none) aiming at failure probability ``beta``. Definition 4 of the
    paper: accuracy ``alpha`` whenever ``eps n`` is large enough.
    """

    name: str

    def __call__(
        self,
        data: Dataset,
        workload: Workload | None,
        *,
        epsilon: float,
        beta: float,
        rng: np.random.Generator,
    ) -> object: ...


def _quiet_diagnostics():
    """At a small ``eps n`` MW can put almost no mass on some cells; the KL potential that the
    trace records (a non-private diagnostic) is then infinite. That is expected: no warning."""
    return np.errstate(over="ignore", divide="ignore")


class _Adapter:
    """A black box wrapping one of the package's mechanisms through ``_run(..., budget)``.

    :meth:`check` is a *dry run*: the mechanism is given a budget that can pay nothing, so it
    validates every input exactly as it would (each mechanism validates everything before its
    first charge) and is then refused at the charge, before anything is computed or released.
    The schedulers call it for every planned run before they charge anything.
    """

    def __call__(self, data, workload, *, epsilon, beta, rng) -> object:
        return self._run(data, workload, epsilon=epsilon, beta=beta, rng=rng, budget=None)

    def check(self, data, workload, *, epsilon, beta) -> None:
        """Raise the ``ValueError``/``TypeError`` a run with these parameters would raise."""
        try:
            self._run(data, workload, epsilon=epsilon, beta=beta, rng=0,
                      budget=PrivacyBudget(_NOTHING))  # fmt: skip
        except BudgetExceededError:
            return


#: The smallest positive double: a budget of it pays for no mechanism's charge.
_NOTHING = math.ulp(0.0)


@dataclass(frozen=True)
class LaplaceBox(_Adapter):
    """Every query answered with Laplace noise (:func:`dpteach.baselines.laplace_answers`):
    ``epsilon``-DP, L1 sensitivity ``k/n``."""

    name: str = "Laplace"

    def _run(self, data, workload, *, epsilon, beta, rng, budget) -> np.ndarray:
        true = workload.answer(data.histogram())
        return baselines.laplace_answers(true, n=data.n, epsilon=epsilon, rng=rng, budget=budget)


@dataclass(frozen=True)
class PrivateMWBox(_Adapter):
    """The lecture's offline private MW (:func:`dpteach.mw.private_mw`), ``epsilon``-DP, with the
    ``alpha`` its theorem guarantees at ``(n, epsilon, beta)``
    (:func:`dpteach.theory.private_mw_alpha`), capped at ``max_alpha``. ``n`` is public here: it
    is the time."""

    max_alpha: float = 0.5
    name: str = "private MW"

    def _run(self, data, workload, *, epsilon, beta, rng, budget) -> Result:
        k, size = Workload.check(workload).k, data.domain.size
        alpha = min(theory.private_mw_alpha(size, k, data.n, epsilon, beta), self.max_alpha)
        with _quiet_diagnostics():
            return mw.private_mw(data, workload, epsilon=epsilon, alpha=alpha, rng=rng,
                                 budget=budget)  # fmt: skip


@dataclass(frozen=True)
class MWEMBox(_Adapter):
    """MWEM (:func:`dpteach.mw.mwem`) with a fixed number of rounds, ``epsilon``-DP."""

    rounds: int = 10
    name: str = "MWEM"

    def _run(self, data, workload, *, epsilon, beta, rng, budget) -> Result:
        with _quiet_diagnostics():
            return mw.mwem(data, workload, epsilon=epsilon, rounds=self.rounds, rng=rng,
                           budget=budget)  # fmt: skip


@dataclass(frozen=True)
class SmallDBBox(_Adapter):
    """SmallDB (:func:`dpteach.smalldb.smalldb`, chapter 03), ``epsilon``-DP; its output is the
    chosen small database's histogram and answers."""

    alpha: float = 0.2
    m: int | None = None
    name: str = "SmallDB"

    def _run(self, data, workload, *, epsilon, beta, rng, budget) -> Result:
        return smalldb(data, workload, epsilon=epsilon, alpha=self.alpha, rng=rng, m=self.m,
                       budget=budget)  # fmt: skip


def answers_of(output: object) -> np.ndarray:
    """The workload answers of a black box's output (a Result or an array of answers)."""
    return np.asarray(output.answers if isinstance(output, Result) else output, dtype=float)


# --- schedules -----------------------------------------------------------------------------------

#: BBScheduler's privacy schedules (``delta`` only for ``"zcdp"``).
SCHEDULES = {
    "pure": "eps_i = eps gamma / (1+gamma)^(i+1): eps-DP, eps_i t_i about constant",
    "sqrt": "eps_i = eps (1 - (1+gamma)^(-1/2)) (1+gamma)^(-i/2): eps-DP, eps_i t_i grows",
    "zcdp": "eps_i ∝ (1+gamma)^(-i/2) with sum eps_i^2/2 = rho: (eps, delta)-DP via zCDP",
    "equal": "eps/R for each of the first R runs, then none (a naive baseline)",
}


def epochs(n0: int, gamma: float, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """The epochs of BBScheduler up to ``horizon``: indices ``i`` and times
    ``t_i = ceil(n0 (1+gamma)^i) <= horizon``, keeping only the first ``i`` of each distinct
    time (an empty epoch must not spend budget). Works for any ``gamma > 0``."""
    n0 = check.integer(n0, "n0", minimum=1)
    gamma = check.positive(gamma, "gamma")
    horizon = check.integer(horizon, "horizon", minimum=n0)
    log_growth = math.log1p(gamma)

    def time(i: int) -> int:  # the ceiling, immune to round-off just above an integer
        return math.ceil(n0 * math.exp(i * log_growth) * (1 - 1e-12))

    def next_index(i: int) -> int:
        """The smallest index after ``i`` whose time exceeds ``time(i)``: doubling, then
        bisection (O(log) evaluations, however small gamma is)."""
        step = 1
        while time(i + step) <= time(i):
            step *= 2
        lo, hi = i + step // 2, i + step  # time(lo) <= time(i) < time(hi) (lo = i when step = 1)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if time(mid) <= time(i) else (lo, mid)
        return hi

    indices, times = [0], [time(0)]
    while True:
        i = next_index(indices[-1])
        if i > _MAX_INDEX:
            raise ValueError(
                f"gamma={gamma:.3g} is too small: epoch indices beyond 2^62 (use gamma >= about "
                f"{math.log(horizon / n0 + 1) / 2**62:.1g})"
            )
        if time(i) > horizon:
            return np.array(indices, dtype=np.int64), np.array(times, dtype=np.int64)
        indices.append(i)
        times.append(time(i))


#: Epoch indices are int64: larger ones (a gamma below about 1e-18) are refused.
_MAX_INDEX = 2**62


def scheduler_epsilons(
    indices: Sequence[int],
    *,
    epsilon: float,
    gamma: float,
    schedule: str = "pure",
    delta: float = 1e-6,
    runs: int | None = None,
) -> np.ndarray:
    """Per-run ``eps_i`` of BBScheduler's ``schedule`` (see :data:`SCHEDULES`).

    ``"pure"``: ``sum_i eps_i = eps`` over all ``i >= 0`` (geometric series). ``"sqrt"``: also
    sums to ``eps``. ``"zcdp"``: ``eps_i = sqrt(2 rho gamma/(1+gamma)) (1+gamma)^(-i/2)`` with
    ``rho`` the zCDP budget that converts to ``(eps, delta)``, so ``sum eps_i^2 / 2 = rho``.
    ``"equal"``: ``eps / runs`` for the first ``runs`` entries of ``indices``, 0 after.
    """
    idx = np.asarray(indices, dtype=float)
    epsilon = check.positive(epsilon, "epsilon")
    gamma = check.positive(gamma, "gamma")
    log_growth = math.log1p(gamma)
    if schedule == "pure":
        return epsilon * gamma * np.exp(-(idx + 1) * log_growth)
    if schedule == "sqrt":
        return epsilon * -math.expm1(-log_growth / 2) * np.exp(-idx * log_growth / 2)
    if schedule == "zcdp":
        rho = approx_dp_to_zcdp(epsilon, delta)
        return math.sqrt(2 * rho * gamma / (1 + gamma)) * np.exp(-idx * log_growth / 2)
    if schedule == "equal":
        runs = check.integer(runs, "runs", minimum=1)
        return np.where(np.arange(idx.size) < runs, epsilon / runs, 0.0)
    raise ValueError(f"schedule must be one of {sorted(SCHEDULES)}, got {schedule!r}")


def scheduler_betas(indices: Sequence[int], beta: float) -> np.ndarray:
    """``beta_i = 6 beta / (pi^2 (i+1)^2)``: they sum to ``beta`` over all ``i >= 0``, so the
    accuracy of every epoch holds at once with probability ``1 - beta``."""
    beta = check.probability(beta, "beta")
    return 6 * beta / (math.pi**2 * (np.asarray(indices, dtype=float) + 1) ** 2)


def improver_rhos(times: Sequence[int], *, rho: float, n0: int, c: float) -> np.ndarray:
    """BBImprover's ``rho_t = rho t^-(1+2c) / zeta(1+2c, n0)`` for ``0 < c < 1/2``.

    ``zeta(s, n0) = sum_{t >= n0} t^-s`` (Hurwitz), so the ``rho_t`` of all ``t >= n0`` sum to
    exactly ``rho``; normalising by the integral instead would overspend. ``eps_t t`` then grows
    like ``t^(1/2 - c)``.
    """
    rho = check.positive(rho, "rho")
    n0 = check.integer(n0, "n0", minimum=1)
    c = check.positive(c, "c")
    if c >= 0.5:
        raise ValueError(f"c must be in (0, 1/2), got {c}")
    t = np.asarray(times, dtype=float)
    if np.any(t < n0):
        raise ValueError(f"times must be at least n0={n0}")
    s = 1 + 2 * c
    return rho * np.exp(-s * np.log(t)) / float(special.zeta(s, n0))


# --- the schedulers ------------------------------------------------------------------------------


@dataclass
class Releases:
    """The outputs of a scheduler's black-box runs, by run time."""

    times: np.ndarray
    outputs: list = field(default_factory=list)

    def at(self, t: int) -> object:
        """The output used to answer queries at time ``t``: that of the last run at or before
        ``t``."""
        t = check.integer(t, "t", minimum=1)
        j = int(np.searchsorted(self.times, t, side="right")) - 1
        if j < 0:
            raise ValueError(f"t must be at least the first run's time {int(self.times[0])}")
        return self.outputs[j]


def _check_inputs(stream: object, blackbox: object, workload: object) -> None:
    if not isinstance(stream, DatabaseStream):
        raise TypeError(f"stream must be a DatabaseStream, got {type(stream).__name__}")
    if not callable(blackbox):
        raise TypeError(f"blackbox must be callable, got {type(blackbox).__name__}")
    if workload is None:
        return
    same_universe(stream, Workload.check(workload), names="stream and workload")


def _spent(budget: PrivacyBudget | ZCDPBudget) -> float:
    """What ``budget`` has spent, in its own unit (epsilon or rho)."""
    return budget.spent if isinstance(budget, ZCDPBudget) else budget.spent_epsilon


def _affordable(budget: PrivacyBudget | ZCDPBudget, runs: list, rhos=None) -> list:
    """The leading ``runs`` (``(t, epsilon, beta, label)``) that ``budget`` can pay in turn,
    found on a copy (the budget itself is not touched): a decision on public information only."""
    trial = budget.trial()
    for j, (_, eps, _, label) in enumerate(runs):
        rho = None if rhos is None else rhos[j]
        if not can_afford(trial, eps, rho=rho):
            return runs[:j]
        charge(trial, eps, label=label, rho=rho)
    return runs


def _check_runs(blackbox: object, stream: DatabaseStream, workload, runs: list) -> None:
    """Let the black box refuse any planned run before anything is charged: adapters (and any
    box with a ``check(data, workload, *, epsilon, beta)`` method) validate every run's
    parameters; a plain callable cannot be checked ahead."""
    box_check = getattr(blackbox, "check", None)
    if box_check is None:
        return
    for t, eps, beta, _ in runs:
        box_check(stream.at(t), workload, epsilon=eps, beta=beta)


def _diagnostic_error(output: object, stream: DatabaseStream, workload, t: int) -> float:
    if workload is None:
        return float("nan")
    return float(np.max(np.abs(answers_of(output) - workload._answer(stream.histogram(t)))))


def bb_scheduler(
    stream: DatabaseStream,
    blackbox: BlackBox,
    workload: Workload | None = None,
    *,
    epsilon: float,
    gamma: float,
    rng: Seed,
    beta: float = 0.05,
    schedule: str = "pure",
    delta: float = 1e-6,
    runs: int | None = None,
    budget: PrivacyBudget | ZCDPBudget | None = None,
) -> Result:
    """BBScheduler (Algorithm 1, Theorem 10): the black box rerun whenever the data grew by
    ``1 + gamma``.

    Epoch ``i`` starts at ``t_i = ceil(n0 (1+gamma)^i)`` (:func:`epochs`); there the black box runs
    once on ``x_{t_i}`` with ``(eps_i, beta_i)`` (:func:`scheduler_epsilons`,
    :func:`scheduler_betas`), and every query until ``t_{i+1}`` is answered from that output.
    Runs continue up to the stream's horizon.

    Guarantee, under neighbouring streams: ``"pure"``, ``"sqrt"`` and ``"equal"``:
    ``epsilon``-DP by basic composition (each run is charged ``eps_i`` to a
    :class:`~dpteach.privacy.PrivacyBudget`). ``"zcdp"``: each pure ``eps_i``-DP run is
    ``eps_i^2/2``-zCDP, charged to a :class:`~dpteach.privacy.ZCDPBudget` of
    ``rho = approx_dp_to_zcdp(epsilon, delta)``, so the whole is ``(epsilon, delta)``-DP.
    Charges are made *before* each run, through :func:`dpteach.privacy.charge` (a pure
    ``eps_i``-DP run costs ``eps_i`` of a ``PrivacyBudget``, ``eps_i^2/2`` of a ``ZCDPBudget``,
    whatever the schedule); a passed ``budget`` that cannot pay stops the schedule (a decision on
    public information only), and nothing more is released. Every run that will happen is first
    checked by the black box (the adapters' ``check``: a dry run that validates everything), so a
    black box that would refuse a run (e.g. SmallDB with too many candidates) refuses before
    anything is charged.

    Returns a :class:`~dpteach.results.Result`: one :class:`~dpteach.results.Round` per run
    (``max_error`` on ``x_{t_i}``, a non-private diagnostic; ``epsilon_spent`` in the budget's
    unit), ``info["releases"]`` (:class:`Releases`), the times, epsilons, betas and the budget.
    """
    _check_inputs(stream, blackbox, workload)
    epsilon = check.positive(epsilon, "epsilon")
    gamma = check.positive(gamma, "gamma")
    beta = check.probability(beta, "beta")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {sorted(SCHEDULES)}, got {schedule!r}")
    if schedule == "zcdp":
        delta = check.delta(delta, allow_zero=False)
    gen = check.rng(rng)
    indices, times = epochs(stream.n0, gamma, stream.horizon)
    if schedule == "equal" and runs is None:
        runs = len(times)
    epsilons = scheduler_epsilons(
        indices, epsilon=epsilon, gamma=gamma, schedule=schedule, delta=delta, runs=runs
    )
    betas = scheduler_betas(indices, beta)
    zcdp = schedule == "zcdp"
    if budget is None:
        budget = ZCDPBudget(approx_dp_to_zcdp(epsilon, delta)) if zcdp else PrivacyBudget(epsilon)
    check_budget(budget)
    # the runs that will happen (the equal split's end, what the budget can pay), each checked
    # by the black box before the first charge: a refusal then spends nothing
    plan = _affordable(budget, [
        (int(t), float(eps_i), float(beta_i), f"epoch {i}: black box at t={t}, eps_i={eps_i:.4g}")
        for i, t, eps_i, beta_i in zip(indices, times, epsilons, betas) if eps_i > 0
    ])  # fmt: skip
    _check_runs(blackbox, stream, workload, plan)

    releases = Releases(np.empty(0, dtype=np.int64))
    trace: list[Round] = []
    for (t, eps_i, beta_i, label), i in zip(plan, indices):
        charge(budget, eps_i, label=label)  # eps_i-DP: eps_i^2/2 to a ZCDPBudget
        output = blackbox(stream.at(t), workload, epsilon=eps_i, beta=beta_i, rng=gen)
        releases.times = np.append(releases.times, t)
        releases.outputs.append(output)
        trace.append(Round(int(i), max_error=_diagnostic_error(output, stream, workload, t),
                           epsilon_spent=_spent(budget)))  # fmt: skip
    ran = len(trace)
    return _result(releases, trace, {
        "indices": indices[:ran], "times": releases.times, "epsilons": epsilons[:ran],
        "betas": betas[:ran], "budget": budget, "schedule": schedule, "gamma": gamma,
        "blackbox": getattr(blackbox, "name", repr(blackbox)),
    })  # fmt: skip


def smalldbg(
    stream: DatabaseStream,
    workload: Workload,
    *,
    epsilon: float,
    gamma: float,
    alpha: float,
    rng: Seed,
    beta: float = 0.05,
    m: int | None = None,
) -> Result:
    """SmallDBG (Theorem 9): :func:`bb_scheduler` with SmallDB (chapter 03) as the black box,
    pure schedule, ``epsilon``-DP."""
    box = SmallDBBox(alpha=alpha, m=m)
    return bb_scheduler(stream, box, workload, epsilon=epsilon, gamma=gamma, rng=rng, beta=beta)


def bb_improver(
    stream: DatabaseStream,
    blackbox: BlackBox,
    workload: Workload | None = None,
    *,
    epsilon: float,
    delta: float,
    rng: Seed,
    c: float = 0.25,
    beta: float = 0.05,
    release_times: Sequence[int] | None = None,
    budget: PrivacyBudget | ZCDPBudget | None = None,
) -> Result:
    """BBImprover (Algorithm 2, Theorem 13): the black box rerun at *every* step ``t >= n0``.

    Run ``t`` has ``rho_t = rho t^-(1+2c) / zeta(1+2c, n0)`` (:func:`improver_rhos`), i.e. the pure
    ``eps_t = sqrt(2 rho_t)``, and ``beta_t = 6 beta / (pi^2 (t - n0 + 1)^2)``; its output answers
    the queries of time ``t``. Guarantee: ``(epsilon, delta)``-DP under neighbouring streams, via
    zCDP: the ``rho_t`` sum to at most ``rho = approx_dp_to_zcdp(epsilon, delta)``, charged to a
    :class:`~dpteach.privacy.ZCDPBudget` before each run; a passed ``budget`` that cannot pay
    stops the runs (a decision on public information only). A passed
    :class:`~dpteach.privacy.PrivacyBudget` is charged each run's pure ``eps_t`` instead (basic
    composition). The black box checks every run that will happen (:class:`_Adapter.check`)
    before anything is charged.

    ``release_times`` (for measurements on long streams): compute only the runs at these times.
    Every other run up to the horizon is still *charged* (in blocks); its output would be
    independent of these, so the measured outputs have exactly the distribution they have in the
    full algorithm. ``None`` (default) runs every step.
    """
    _check_inputs(stream, blackbox, workload)
    epsilon = check.positive(epsilon, "epsilon")
    delta = check.delta(delta, allow_zero=False)
    beta = check.probability(beta, "beta")
    gen = check.rng(rng)
    rho = approx_dp_to_zcdp(epsilon, delta)
    all_times = np.arange(stream.n0, stream.horizon + 1)
    rhos = improver_rhos(all_times, rho=rho, n0=stream.n0, c=c)
    if release_times is None:
        wanted = all_times
    else:
        wanted = np.unique([check.integer(t, "release_times[i]") for t in release_times])
        if wanted.size == 0 or wanted[0] < stream.n0 or wanted[-1] > stream.horizon:
            raise ValueError(f"release_times must lie in {stream.n0}..{stream.horizon}")
    if budget is None:
        budget = ZCDPBudget(rho)
    check_budget(budget)

    # the charges in order: a block of runs charged but not simulated before each wanted run
    # (and after the last), each wanted run itself; the leading ones the budget can pay are
    # planned, and the black box checks every planned run before the first charge
    steps, done = [], stream.n0  # runs at times < done are accounted for
    for t in [*wanted.tolist(), None]:
        end = stream.horizon + 1 if t is None else t
        if end > done:
            block = rhos[done - stream.n0 : end - stream.n0]
            steps.append((None, math.fsum(np.sqrt(2 * block)), math.fsum(block),
                          f"runs at t={done}..{end - 1} (charged, not simulated)"))  # fmt: skip
        if t is not None:
            rho_t = float(rhos[t - stream.n0])
            steps.append((t, math.sqrt(2 * rho_t), rho_t, f"run at t={t}, rho_t={rho_t:.3g}"))
            done = t + 1
    plan = _affordable(budget, [(t, eps, 0.0, label) for t, eps, _, label in steps],
                       rhos=[r for *_, r, _ in steps])  # fmt: skip
    runs = [(t, eps, _improver_beta(beta, t, stream.n0), label)
            for t, eps, _, label in plan if t is not None]  # fmt: skip
    _check_runs(blackbox, stream, workload, runs)

    releases = Releases(np.empty(0, dtype=np.int64))
    trace: list[Round] = []
    for (t, eps, _, label), (*_, rho_t, _) in zip(plan, steps):
        charge(budget, eps, label=label, rho=rho_t)  # rho_t-zCDP, eps-DP with eps^2/2 = rho_t
        if t is None:
            continue
        output = blackbox(stream.at(t), workload, epsilon=eps,
                          beta=_improver_beta(beta, t, stream.n0), rng=gen)  # fmt: skip
        releases.times = np.append(releases.times, t)
        releases.outputs.append(output)
        trace.append(Round(t, max_error=_diagnostic_error(output, stream, workload, t),
                           epsilon_spent=_spent(budget)))  # fmt: skip
    return _result(releases, trace, {
        "times": releases.times, "rhos": rhos[releases.times - stream.n0], "budget": budget,
        "c": c, "blackbox": getattr(blackbox, "name", repr(blackbox)),
    })  # fmt: skip


def _improver_beta(beta: float, t: int | None, n0: int) -> float:
    """BBImprover's ``beta_t = 6 beta / (pi^2 (t - n0 + 1)^2)``."""
    return 0.0 if t is None else 6 * beta / (math.pi**2 * (t - n0 + 1) ** 2)


def _result(releases: Releases, trace: list[Round], info: dict) -> Result:
    last = releases.outputs[-1] if releases.outputs else None
    synthetic = last.synthetic if isinstance(last, Result) else np.empty(0)
    answers = np.empty(0) if last is None else answers_of(last)
    info["releases"] = releases
    return Result(synthetic, answers, trace, info=info)


def max_error_over_time(
    result: Result, stream: DatabaseStream, workload: Workload, times: Sequence[int]
) -> np.ndarray:
    """``max_q |a_q(t) - q(x_t)|`` at each time: the answers a scheduler gives at ``t`` (from its
    latest run) against the *current* database (a non-private measurement)."""
    releases = result.info["releases"]
    return np.array(
        [
            np.max(np.abs(answers_of(releases.at(t)) - workload.answer(stream.histogram(t))))
            for t in times
        ]
    )


# --- PMWG ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """One entry of :class:`PMWG`'s trace: a query (``kind="query"``) or an arrival.

    ``error`` (answer vs the current database) and ``potential`` (``D(x_t || p_hat)``) are
    non-private diagnostics; ``spent`` is the epsilon charged so far.
    """

    time: int
    kind: str
    hard: bool = False
    answer: float = float("nan")
    error: float = float("nan")
    potential: float = float("nan")
    spent: float = 0.0


class PMWG:
    """Private multiplicative weights for growing databases (Algorithm 3; our reconstruction).

    The public histogram ``p_hat`` starts uniform. On each arrival (size ``t -> t+1``) it becomes
    ``(t p_hat + u)/(t+1)`` — the *uniform update*, which reads no data and costs no privacy
    (Lemma 15 bounds the potential's rise). A query ``q`` at time ``t`` goes through a sparse-vector
    test (:class:`~dpteach.AboveThreshold`, threshold ``alpha``) of ``|q(x_t) - q(p_hat)|``:

    * easy: the answer is ``q(p_hat)`` (public);
    * hard: the answer is ``y = q(x_t) + Lap(scale)`` and ``p_hat`` takes an MW step
      (``eta = alpha/2``) towards ``y``; the instance halts.

    Each sparse-vector instance is calibrated to the sensitivity ``1/s`` at the time ``s`` it
    starts (later queries have sensitivity ``1/t <= 1/s``): comparison noise ``Lap(scale)``,
    threshold noise ``Lap(scale/2)``, so it is ``4/(s scale)``-DP; a hard answer at ``t`` is
    ``1/(t scale)``-DP. Later hard queries are cheaper, like ``1/t``.

    Guarantee: ``epsilon``-DP under neighbouring streams, by basic composition over everything
    charged to the :class:`~dpteach.privacy.PrivacyBudget` (each instance when it starts, each hard
    answer before it is released; a passed :class:`~dpteach.privacy.ZCDPBudget` is charged each
    pure step's ``eps^2/2`` instead). Both noise grids (the test's and the hard answer's) are
    checked when an instance starts, and the answer's again before each test, so a refusal for
    an unrepresentable noise scale happens before any charge and leaves the object usable.
    A new instance starts only if the budget can pay for it *and*
    its hard answer, and if the hard queries so far are fewer than Corollary 16's bound
    (:func:`dpteach.theory.pmwg_hard_query_bound`); otherwise the query is refused with
    :class:`~dpteach.privacy.BudgetExceededError` — a decision on public information only (time,
    past charges), which releases nothing and changes nothing. A ``budget`` shared with other
    mechanisms may be spent while an instance runs; a query is then refused, before its test, when
    the budget can no longer pay the hard answer. With ``scale`` at least
    :func:`dpteach.theory.pmwg_noise_scale` (the default) the budget can never run out.

    Parameters
    ----------
    stream
        The database stream; the mechanism starts at time ``stream.n0``.
    epsilon, alpha
        Total privacy budget; hardness threshold (and MW step ``alpha/2``).
    rng
        Generator (consumed) or seed.
    scale
        Laplace noise scale of the comparisons and the hard answers.
    uniform_update
        ``False`` disables the uniform update (an ablation: still private, but the potential can
        rise without bound under adversarial growth).
    track_arrivals
        Record the potential after every arrival in :attr:`trace` (``True``), or after every
        ``k``-th (an integer ``k``: the sizes ``t`` with ``t - n0`` a multiple of ``k``);
        vectorised, and a diagnostic only: what is recorded changes nothing else.
    """

    def __init__(
        self,
        stream: DatabaseStream,
        *,
        epsilon: float,
        alpha: float,
        rng: Seed,
        scale: float | None = None,
        uniform_update: bool = True,
        track_arrivals: bool | int = False,
        budget: PrivacyBudget | ZCDPBudget | None = None,
    ):
        if not isinstance(stream, DatabaseStream):
            raise TypeError(f"stream must be a DatabaseStream, got {type(stream).__name__}")
        self.epsilon = check.positive(epsilon, "epsilon")
        self.alpha = check.positive(alpha, "alpha")
        if self.alpha >= 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        size = stream.domain.size
        check.dense_size(size)
        if scale is None:
            self.scale = theory.pmwg_noise_scale(self.epsilon, size, self.alpha, stream.n0)
        else:
            self.scale = check.positive(scale, "scale")
        check_budget(budget)
        self.budget = PrivacyBudget(self.epsilon) if budget is None else budget
        self._rng = check.rng(rng)
        self.stream = stream
        self.uniform_update = bool(uniform_update)
        if isinstance(track_arrivals, bool | np.bool_):
            self._track_every = int(bool(track_arrivals))  # 0: not tracked
        else:
            self._track_every = check.integer(track_arrivals, "track_arrivals", minimum=1)
        self.track_arrivals = self._track_every > 0
        self.t = stream.n0
        self.p_hat = np.full(size, 1.0 / size)
        self._counts = stream.counts(stream.n0)  # private
        self._sparse = None
        self.instances = 0
        self.hard = 0
        self.trace: list[Event] = []

    # -- time ----------------------------------------------------------------------------------

    def potential(self) -> float:
        """``D(x_t || p_hat)`` (a non-private diagnostic)."""
        x = self._counts / self.t
        support = x > 0  # p_hat > 0 everywhere: it starts uniform and MW keeps it positive
        return float(np.sum(x[support] * np.log(x[support] / self.p_hat[support])))

    def advance(self, t: int) -> None:
        """Let the database grow to size ``t``, applying the uniform update for every arrival.

        The ``t - s`` updates from size ``s`` compose to ``p_hat <- (s/t) p_hat + (1 - s/t) u``.
        """
        t = check.integer(t, "t", minimum=self.t)
        if t > self.stream.horizon:
            raise ValueError(f"t must be at most the stream's horizon {self.stream.horizon}")
        if t == self.t:
            return
        new = self.stream.cells[self.t : t]
        if self.track_arrivals:
            self._record_arrivals(new)
        self._counts = self._counts + np.bincount(new, minlength=self.p_hat.size)
        if self.uniform_update:
            self.p_hat = (self.t / t) * self.p_hat + (1 - self.t / t) / self.p_hat.size
        self.t = t

    def _record_arrivals(self, new: np.ndarray, chunk: int = 20_000) -> None:
        size, start, spent = self.p_hat.size, self.t, _spent(self.budget)
        every, n0 = self._track_every, self.stream.n0
        counts = self._counts
        for lo in range(0, new.size, chunk):
            block = new[lo : lo + chunk]
            cumulative = counts + np.cumsum(np.eye(size)[block], axis=0)
            counts = cumulative[-1]
            sizes = start + lo + np.arange(1, block.size + 1)
            kept = (sizes - n0) % every == 0
            cumulative, sizes = cumulative[kept], sizes[kept]
            x = cumulative / sizes[:, None]
            w = (start / sizes)[:, None] if self.uniform_update else np.ones((sizes.size, 1))
            log_q = np.log(w * self.p_hat + (1 - w) / size)
            xlogx = x * np.log(np.where(x > 0, x, 1.0))
            potentials = np.sum(xlogx - x * log_q, axis=1)
            self.trace.extend(Event(int(s), "arrival", potential=float(phi), spent=spent)
                              for s, phi in zip(sizes, potentials))  # fmt: skip

    # -- queries --------------------------------------------------------------------------------

    def _noise_costs(self, t: int) -> tuple[float, float]:
        """``(instance, hard answer)`` epsilons at time ``t``."""
        return 4 / (t * self.scale), 1 / (t * self.scale)

    def _start_instance(self) -> None:
        t = self.t
        cap = math.floor(theory.pmwg_hard_query_bound(self.p_hat.size, self.alpha, t,
                                                      self.stream.n0))  # fmt: skip
        if self.hard >= cap:
            raise BudgetExceededError(
                f"PMWG answered {self.hard} hard queries, Corollary 16's bound at t={t}; "
                "nothing was released (more data raise the bound)"
            )
        eps_instance, eps_answer = self._noise_costs(t)
        if not self._can_afford(eps_instance, eps_answer):
            raise BudgetExceededError(
                f"PMWG cannot pay a sparse-vector instance at t={t} "
                f"({eps_instance + eps_answer:.4g} with its answer; "
                f"{self._remaining()} left); nothing was released"
            )
        # both grids (the test's and the hard answer's) before the charge: neither the instance
        # nor its answer may refuse once the budget was spent
        self._check_grids(t, eps_instance)
        # PMWG's own epsilons (public values it computed): the internal paths, checked once
        _charge(self.budget, eps_instance, label=f"sparse vector #{self.instances + 1} from t={t}")
        self._sparse = self._make_sparse(t, eps_instance)
        self.instances += 1

    def _can_afford(self, *epsilons: float) -> bool:
        """Whether the budget can pay these pure steps in turn (on a copy; public information)."""
        trial = self.budget.trial()
        for eps in epsilons:
            if not _can_afford(trial, eps):
                return False
            _charge(trial, eps, label="")
        return True

    def _remaining(self) -> str:
        if isinstance(self.budget, ZCDPBudget):
            return f"rho={self.budget.remaining:.4g}"
        return f"{self.budget.remaining_epsilon:.4g}"

    def _check_grids(self, t: int, eps_instance: float | None = None) -> None:
        """Refuse (``ValueError``, public parameters only) a sparse-vector instance or a hard
        answer at time ``t`` whose safe noise grid cannot be represented."""
        try:
            if eps_instance is not None:
                # validates its grid; draws and charges nothing
                AboveThreshold(self.alpha, sensitivity=1 / t, epsilon=eps_instance, rng=0)
            _safe_laplace_grid(1 / t, self._noise_costs(t)[1])
        except ValueError as err:
            raise ValueError(
                f"PMWG cannot answer at t={t} with scale={self.scale:.3g}: {err}; nothing was "
                "charged or released (choose a smaller scale)"
            ) from None

    def _make_sparse(self, t: int, epsilon: float):
        """The sparse-vector instance starting at time ``t``: sensitivity ``1/t``."""
        return AboveThreshold(self.alpha, sensitivity=1 / t, epsilon=epsilon, rng=self._rng)

    def answer(self, q: object) -> float:
        """Answer the linear query ``q`` (a vector over X with entries in [0, 1]) at the current
        time; raises :class:`~dpteach.privacy.BudgetExceededError` (releasing nothing) when no
        sparse-vector instance can be paid for."""
        q = check.array(q, "q", ndim=1)
        if q.shape != self.p_hat.shape or np.any((q < 0) | (q > 1)):
            raise ValueError(f"q must have length {self.p_hat.size} and entries in [0, 1]")
        t = self.t
        if self._sparse is None:
            self._start_instance()
        else:
            self._check_grids(t)  # the hard answer's grid at this time, before the test
            if not self._can_afford(self._noise_costs(t)[1]):
                # only with a budget shared with other mechanisms, which spent what this
                # instance's hard answer needs: refuse before the test (public information
                # only), not after it
                raise BudgetExceededError(
                    f"PMWG cannot pay a hard answer at t={t} ({self._remaining()} left); "
                    "nothing was released"
                )
        true = float(q @ self._counts) / t
        estimate = float(q @ self.p_hat)
        hard = self._sparse.test(abs(true - estimate))
        if hard:
            eps_answer = self._noise_costs(t)[1]
            _charge(self.budget, eps_answer, label=f"hard answer at t={t}")
            value = float(_laplace(true, _safe_laplace_grid(1 / t, eps_answer), self._rng))
            eta = math.copysign(self.alpha / 2, estimate - value)
            self.p_hat = mw.mw_update(self.p_hat, q, eta)
            self.hard += 1
            self._sparse = None
        else:
            value = estimate
        spent = _spent(self.budget)
        self.trace.append(Event(t, "query", hard=bool(hard), answer=value, error=abs(value - true),
                                potential=self.potential(), spent=spent))  # fmt: skip
        return value

    def column(self, name: str, kind: str = "query") -> np.ndarray:
        """One field of the trace's ``kind`` events as an array, e.g. ``column("potential")``."""
        if name not in Event.__dataclass_fields__ or name == "kind":
            raise ValueError(f"name must be a field of Event, got {name!r}")
        if kind not in ("query", "arrival"):
            raise ValueError(f"kind must be 'query' or 'arrival', got {kind!r}")
        return np.array([getattr(e, name) for e in self.trace if e.kind == kind], dtype=float)


@dataclass
class QueryLog:
    """Answers of an online mechanism to passes over a workload at given times."""

    times: np.ndarray
    errors: np.ndarray  # (len(times), k): |answer - q(x_t)|, NaN where refused
    hard: np.ndarray  # (len(times),): hard queries in each pass

    def max_error(self) -> np.ndarray:
        """The max error of each pass (over the answered queries)."""
        return np.nanmax(np.where(np.isnan(self.errors), -np.inf, self.errors), axis=1)


def ask_over_time(
    mechanism: PMWG | mw.OnlinePMW,
    stream: DatabaseStream,
    workload: Workload,
    times: Sequence[int],
) -> QueryLog:
    """Ask every query of ``workload`` once at each time in ``times`` (increasing), letting a
    :class:`PMWG` see the data grow; an :class:`~dpteach.mw.OnlinePMW` built on ``x_{n0}`` keeps
    answering from the data it was given (the naive *static PMW*). Errors are measured against the
    current database ``x_t``; refused queries (budget) count as NaN."""
    _check_inputs(stream, lambda: None, workload)
    times = [check.integer(t, "times[i]", minimum=stream.n0) for t in times]
    if any(b < a for a, b in zip(times, times[1:])):
        raise ValueError("times must be increasing")
    errors = np.full((len(times), workload.k), np.nan)
    hard = np.zeros(len(times), dtype=np.int64)
    queries = [workload.query(i) for i in range(workload.k)]
    for row, t in enumerate(times):
        if isinstance(mechanism, PMWG):
            mechanism.advance(t)
        true = workload._answer(stream.histogram(t))
        before = mechanism.hard
        for i, q in enumerate(queries):
            try:
                errors[row, i] = abs(mechanism.answer(q) - true[i])
            except BudgetExceededError:
                continue
        hard[row] = mechanism.hard - before
    return QueryLog(np.asarray(times), errors, hard)
