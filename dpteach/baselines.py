"""The baselines: answer every query of a workload independently with Laplace or Gaussian noise.

Under replace-one neighbours, each of ``k`` linear queries on a database of ``n`` records has
sensitivity ``1/n``, so the vector of all ``k`` answers has L1 sensitivity ``k/n`` and L2
sensitivity ``sqrt(k)/n``. The Laplace baseline's max error therefore grows like
``k log k / (n eps)`` and the Gaussian baseline's like ``sqrt(k log k * log(1/delta)) / (n eps)``:
chapter 00's starting point, and what the iterative algorithms of the later chapters beat.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import _validate as check
from . import mechanisms
from .data import Dataset
from .privacy import PrivacyBudget, ZCDPBudget
from .queries import Workload


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
    Guarantee: ``epsilon``-DP under replace-one neighbours (replacing a record moves ``1/n`` out
    of one cell and into another: L1 sensitivity ``2/n``, whatever the workload; Dwork-Roth
    Thm 3.6 with :func:`dpteach.laplace`'s floating-point-safe noise); the answers are
    post-processing, unbiased, and may fall outside [0, 1]. A query that sums ``c`` cells gets
    noise of standard deviation ``sqrt(2c) * 2 / (n eps)``: excellent when ``|X|`` is small next
    to ``n eps`` (8 binary attributes, a few thousand people: it beats MWEM and AIM,
    ``benchmarks/bench_mwem.py``), hopeless when a query sums millions of cells. A passed
    Generator is consumed.
    """
    check.same_universe(check.dataset(data), check.workload(workload))
    check.dense_size(workload.domain_size)
    noisy = mechanisms.laplace(data.histogram(), sensitivity=2 / data.n, epsilon=epsilon,
                               rng=rng, budget=budget)  # fmt: skip
    return workload._answer(noisy)


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
    check.workload(workload)
    check.dataset(data)
    check.same_universe(data, workload)
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
