"""The baselines: independent Laplace or Gaussian noise, per query or on a structured release.

Under replace-one neighbours, each of ``k`` linear queries on a database of ``n`` records has
sensitivity ``1/n``, so the vector of all ``k`` answers has L1 sensitivity ``k/n`` and L2
sensitivity ``sqrt(k)/n`` (:func:`laplace_answers`, :func:`gaussian_answers`). The Laplace
baseline's max error therefore grows like ``k log k / (n eps)`` and the Gaussian baseline's like
``sqrt(k log k * log(1/delta)) / (n eps)``: chapter 00's starting point.

Those *naive* baselines ignore the workload's structure. A record lies in exactly one cell of
any table of normalised counts, so replacing it moves ``1/n`` out of one cell and into another:
``T`` tables (the histogram over X, ``T = 1``; or ``T`` marginal tables) have L1 sensitivity
``2T/n`` and L2 sensitivity ``sqrt(2T)/n`` (:func:`tables_sensitivity`), however many cells they
hold. The *structured* baselines release noisy tables at that sensitivity and answer every query
from them (post-processing): the noisy histogram (:func:`laplace_histogram_answers`,
:func:`gaussian_histogram_answers`; the identity strategy) and the noisy marginal tables
(:func:`laplace_marginal_answers`, :func:`gaussian_marginal_answers`). These are the honest
baselines for marginal workloads, and the ones MWEM-style algorithms must beat.

Neighbouring relation: replace-one throughout. Under add/remove neighbours (as private-pgm and
smartnoise use, with unnormalised counts) one record changes one cell of each table by 1, so the
L1 sensitivity halves (``2T`` becomes ``T``) and the L2 sensitivity shrinks by ``sqrt(2)``
(``sqrt(2T)`` becomes ``sqrt(T)``): a Laplace release they call ``eps``-DP is ``2 eps``-DP under
replace-one, and a Gaussian one they call ``rho``-zCDP is ``2 rho``-zCDP here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import _validate as check
from . import mechanisms
from .data import Dataset
from .domain import same_universe
from .privacy import PrivacyBudget, ZCDPBudget
from .queries import MarginalWorkload, Workload


def _answers(answers: object) -> np.ndarray:
    if isinstance(answers, Dataset | Workload):
        raise TypeError(
            f"answers must be the exact answers (a 1-D array), got a {type(answers).__name__}: "
            "compute workload.answer(data.histogram()) first"
        )
    a = check.array(answers, "answers", ndim=1)
    if a.size == 0:
        raise ValueError("answers must not be empty (there is nothing to release)")
    return a


def laplace_answers(
    answers: object,
    *,
    n: int,
    epsilon: float,
    rng: np.random.Generator | int,
    budget: PrivacyBudget | ZCDPBudget | None = None,
) -> np.ndarray:
    """The ``k`` exact answers plus independent ``Lap(k / (n eps))`` noise.

    Guarantee: ``epsilon``-DP under replace-one neighbours when ``answers`` are ``k`` linear
    queries with values in [0, 1] on a database of ``n`` records (L1 sensitivity ``k/n``;
    equivalently, basic composition of ``k`` answers at ``eps/k`` each). Dwork-Roth Thm 3.6 is
    about real-valued noise; the noise is drawn by :func:`dpteach.laplace` with its default
    floating-point-safe sampler, which makes the guarantee hold for the released doubles (its
    scale is at most ``1 + 2^-10`` times ``k / (n eps)``). ``budget`` is charged ``epsilon`` (a
    :class:`~dpteach.privacy.ZCDPBudget`: ``epsilon^2/2``) before the noise is drawn. A passed
    Generator is consumed.
    """
    a = _answers(answers)
    n = check.integer(n, "n", minimum=1)
    return mechanisms.laplace(a, sensitivity=a.size / n, epsilon=epsilon, rng=rng, budget=budget)


def gaussian_answers(
    answers: object,
    *,
    n: int,
    epsilon: float,
    delta: float,
    rng: np.random.Generator | int,
    calibration: str = "analytic",
    budget: PrivacyBudget | ZCDPBudget | None = None,
) -> np.ndarray:
    """The ``k`` exact answers plus Gaussian noise calibrated to L2 sensitivity ``sqrt(k)/n``.

    Guarantee: ``(epsilon, delta)``-DP under replace-one neighbours for ``k`` linear queries with
    values in [0, 1] on ``n`` records (the Gaussian mechanism :func:`dpteach.gaussian`), so
    ``sigma`` is of order ``sqrt(k ln(1/delta)) / (n eps)``. The noise is floating-point safe: the
    exact discrete Gaussian on a fine grid, calibrated through zCDP (Canonne, Kamath and Steinke
    2020), with ``sigma`` from :func:`~dpteach.mechanisms.gaussian_sigma` (about 7 % above Balle
    and Wang's analytic sigma for continuous noise at ``epsilon = 1, delta = 1e-6``). ``budget``
    is charged ``(epsilon, delta)`` (a :class:`~dpteach.privacy.ZCDPBudget`: the release's own
    ``rho``) before the noise is drawn. A passed Generator is consumed.
    """
    a = _answers(answers)
    n = check.integer(n, "n", minimum=1)
    return mechanisms.gaussian(
        a,
        sensitivity=math.sqrt(a.size) / n,
        epsilon=epsilon,
        delta=delta,
        rng=rng,
        calibration=calibration,
        budget=budget,
    )


def tables_sensitivity(tables: int, n: int, *, norm: int) -> float:
    """The sensitivity of ``tables`` normalised tables (each sums to 1) on ``n`` records under
    replace-one neighbours: L1 ``2T/n`` (``norm=1``) or L2 ``sqrt(2T)/n`` (``norm=2``).

    Replacing a record moves ``1/n`` out of one cell of each table and into another (or into the
    same cell, if the two records agree on the table's attributes): at most 2 cells per table
    change, by ``1/n`` each. Attained when the two records differ on every table.
    """
    tables = check.integer(tables, "tables", minimum=1)
    n = check.integer(n, "n", minimum=1)
    if norm == 1:
        return 2 * tables / n
    if norm == 2:
        return math.sqrt(2 * tables) / n
    raise ValueError(f"norm must be 1 or 2, got {norm!r}")


def _histogram_setting(data: Dataset, workload: Workload) -> None:
    same_universe(Dataset.check(data), Workload.check(workload))
    check.dense_size(workload.domain_size)


def laplace_histogram_answers(
    data: Dataset,
    workload: Workload,
    *,
    epsilon: float,
    rng: np.random.Generator | int,
    budget: PrivacyBudget | ZCDPBudget | None = None,
) -> np.ndarray:
    """The workload answered on the *noisy histogram*: ``p + Lap(2 / (n eps))`` on every cell of X.

    The identity strategy: one measurement of the whole histogram instead of one per query.
    Guarantee: ``epsilon``-DP under replace-one neighbours (L1 sensitivity ``2/n`` whatever the
    workload, :func:`tables_sensitivity` with ``T = 1``; Dwork-Roth Thm 3.6 with
    :func:`dpteach.laplace`'s floating-point-safe noise); the answers are post-processing,
    unbiased, and may fall outside [0, 1]. A query that sums ``c`` cells gets noise of standard
    deviation ``sqrt(2c) * 2 / (n eps)`` (:func:`dpteach.theory.histogram_rms_error`):
    excellent when ``|X|`` is small next to ``n eps`` (8 binary attributes, a few thousand
    people: it beats MWEM and AIM, ``benchmarks/bench_mwem.py``), hopeless when a query sums
    millions of cells. ``budget`` is charged ``epsilon`` (a
    :class:`~dpteach.privacy.ZCDPBudget`: ``epsilon^2/2``) before the noise is drawn. A passed
    Generator is consumed.
    """
    _histogram_setting(data, workload)
    noisy = mechanisms.laplace(data.histogram(), sensitivity=tables_sensitivity(1, data.n, norm=1),
                               epsilon=epsilon, rng=rng, budget=budget)  # fmt: skip
    return workload._answer(noisy)


def gaussian_histogram_answers(
    data: Dataset,
    workload: Workload,
    *,
    epsilon: float,
    delta: float,
    rng: np.random.Generator | int,
    calibration: str = "analytic",
    budget: PrivacyBudget | ZCDPBudget | None = None,
) -> np.ndarray:
    """The workload answered on the histogram plus Gaussian noise of L2 sensitivity ``sqrt(2)/n``.

    Guarantee: ``(epsilon, delta)``-DP under replace-one neighbours (:func:`tables_sensitivity`
    with ``T = 1``; the floating-point-safe discrete Gaussian of :func:`dpteach.gaussian`, whose
    ``sigma`` is :func:`~dpteach.mechanisms.gaussian_sigma` at that sensitivity); the answers are
    post-processing and unbiased. A query that sums ``c`` cells gets ``N(0, c sigma^2)`` noise
    (:func:`dpteach.theory.histogram_rms_error`). ``budget`` is charged ``(epsilon, delta)`` (a
    :class:`~dpteach.privacy.ZCDPBudget`: the release's own ``rho``) before the noise is drawn.
    A passed Generator is consumed.
    """
    _histogram_setting(data, workload)
    noisy = mechanisms.gaussian(
        data.histogram(),
        sensitivity=tables_sensitivity(1, data.n, norm=2),
        epsilon=epsilon,
        delta=delta,
        rng=rng,
        calibration=calibration,
        budget=budget,
    )
    return workload._answer(noisy)


def exact_marginal_answers(data: Dataset, workload: MarginalWorkload) -> np.ndarray:
    """The exact answers of a marginal workload, counted from the records (``O(n T)``; no
    histogram over X is built, so ``|X|`` may be huge): equal to ``workload.answer(data)``."""
    if not isinstance(workload, MarginalWorkload):
        raise TypeError(
            f"workload must be a MarginalWorkload (noisy marginal tables need its tables), got "
            f"{type(workload).__name__}"
        )
    same_universe(Dataset.check(data), workload)
    tables = []
    for m, attributes in enumerate(workload.marginals):
        columns = data.records[:, workload.domain.axes(attributes)]
        shape = workload.marginal_shape(m)
        cells = np.ravel_multi_index(tuple(columns.T), shape)
        tables.append(np.bincount(cells, minlength=math.prod(shape)) / data.n)
    return np.concatenate(tables)


def laplace_marginal_answers(
    data: Dataset,
    workload: MarginalWorkload,
    *,
    epsilon: float,
    rng: np.random.Generator | int,
    budget: PrivacyBudget | ZCDPBudget | None = None,
) -> np.ndarray:
    """The ``T`` marginal tables of ``workload`` plus ``Lap(2T / (n eps))`` on every cell.

    The structured Laplace baseline: each query of a marginal workload is a cell of one of its
    ``T`` tables, so the answers *are* the noisy tables (in the workload's order). Guarantee:
    ``epsilon``-DP under replace-one neighbours from the tables' L1 sensitivity ``2T/n``
    (:func:`tables_sensitivity`; Dwork-Roth Thm 3.6 with :func:`dpteach.laplace`'s
    floating-point-safe noise, scale at most ``1 + 2^-10`` times ``2T/(n eps)``), against
    ``k/n`` for :func:`laplace_answers` on the same ``k`` cells. Unbiased; answers may fall
    outside [0, 1]. ``budget`` is charged ``epsilon`` (a :class:`~dpteach.privacy.ZCDPBudget`:
    ``epsilon^2/2``) before the noise is drawn. A passed Generator is consumed.
    """
    true = exact_marginal_answers(data, workload)
    sensitivity = tables_sensitivity(len(workload.marginals), data.n, norm=1)
    return mechanisms.laplace(true, sensitivity=sensitivity, epsilon=epsilon, rng=rng,
                              budget=budget)  # fmt: skip


def gaussian_marginal_answers(
    data: Dataset,
    workload: MarginalWorkload,
    *,
    epsilon: float,
    delta: float,
    rng: np.random.Generator | int,
    calibration: str = "analytic",
    budget: PrivacyBudget | ZCDPBudget | None = None,
) -> np.ndarray:
    """The ``T`` marginal tables of ``workload`` plus Gaussian noise of L2 sensitivity
    ``sqrt(2T)/n`` on every cell.

    Guarantee: ``(epsilon, delta)``-DP under replace-one neighbours (:func:`tables_sensitivity`;
    the floating-point-safe discrete Gaussian of :func:`dpteach.gaussian`, ``sigma`` from
    :func:`~dpteach.mechanisms.gaussian_sigma`), against ``sqrt(k)/n`` for
    :func:`gaussian_answers` on the same ``k`` cells. Unbiased. ``budget`` is charged
    ``(epsilon, delta)`` (a :class:`~dpteach.privacy.ZCDPBudget`: the release's own ``rho``)
    before the noise is drawn. A passed Generator is consumed.
    """
    true = exact_marginal_answers(data, workload)
    return mechanisms.gaussian(
        true,
        sensitivity=tables_sensitivity(len(workload.marginals), data.n, norm=2),
        epsilon=epsilon,
        delta=delta,
        rng=rng,
        calibration=calibration,
        budget=budget,
    )


def max_error_sweep(
    workload: Workload,
    data: Dataset,
    *,
    ks: list[int],
    epsilon: float,
    delta: float,
    trials: int,
    rng: np.random.Generator | int,
) -> dict[str, np.ndarray]:
    """Measured max error of both baselines on random sub-workloads of ``k`` queries.

    For each ``k`` in ``ks`` and each trial, ``k`` queries are drawn from ``workload`` without
    replacement and answered by :func:`laplace_answers` (``epsilon``-DP) and
    :func:`gaussian_answers` (``(epsilon, delta)``-DP). The noise of all trials of one ``k`` is
    drawn in one call per baseline: each trial is an independent release with exactly the
    distribution (same grid, same integer noise scale) of one call of those functions. ``data``
    and ``workload`` must be over the same universe. A passed Generator is consumed; the same
    seed gives the same table.

    Returns
    -------
    dict
        ``{"laplace": errors, "gaussian": errors}``, each of shape ``(len(ks), trials)``.
    """
    Workload.check(workload)
    Dataset.check(data)
    same_universe(data, workload)
    epsilon = check.positive(epsilon, "epsilon")
    delta = check.delta(delta, allow_zero=False)
    gen = check.rng(rng)
    trials = check.integer(trials, "trials", minimum=1)
    if isinstance(ks, str | bytes) or not isinstance(ks, Sequence | np.ndarray):
        raise TypeError(f"ks must be a sequence of integers, got {type(ks).__name__}")
    ks = [check.integer(k, "ks[i]", minimum=1) for k in ks]
    if not ks:
        raise ValueError("ks must hold at least one k")
    check.dense_size(len(ks) * trials, "the table of errors")
    if max(ks) > workload.k:
        raise ValueError(f"ks must be at most the workload size {workload.k}, got {max(ks)}")
    true = workload._answer(data.histogram())
    out = {"laplace": np.empty((len(ks), trials)), "gaussian": np.empty((len(ks), trials))}
    for i, k in enumerate(ks):
        check.dense_size(trials * k, "the trials' answers")
        # row j: trial j's k distinct queries, then one release of each baseline on them
        exact = true[
            np.array([gen.choice(workload.k, size=k, replace=False) for _ in range(trials)])
        ]
        lap_grid = mechanisms.safe_laplace_grid(k / data.n, epsilon, k=k)
        gauss_grid = mechanisms._safe_gauss_grid(math.sqrt(k) / data.n, epsilon, delta, k)
        lap = mechanisms._safe_laplace_noise(exact, lap_grid, gen)
        gau = mechanisms._safe_gaussian_noise(exact, gauss_grid, gen)
        out["laplace"][i] = np.max(np.abs(lap - exact), axis=1)
        out["gaussian"][i] = np.max(np.abs(gau - exact), axis=1)
    return out
