"""SmallDB: the exponential mechanism over all small databases (Blum, Ligett and Roth 2008).

Item 3 of the projection notes' recap. Some database of only ``m = ceil(ln|Q| / alpha^2)``
records answers every query of ``Q`` within ``alpha`` when ``|Q| >= 3``
(:func:`dpteach.theory.smalldb_size`). SmallDB enumerates *all* databases of ``m`` records over
the universe X (the same candidate set as the median mechanism,
:func:`dpteach.median.small_databases`) and picks one with the exponential mechanism, scoring a
candidate ``y`` by ``-max_q |q(x) - q(y)|``. That score moves by at most ``1/n`` between
replace-one neighbours, so the choice is ``epsilon``-DP, and the chosen database is a synthetic
database: every answer computed from it is post-processing.

The price is the candidate set: ``C(|X| + m - 1, m)`` databases, polynomial in ``|X|`` for fixed
``m`` but hopeless beyond tiny universes. The limits are checked before anything is allocated.
"""

from __future__ import annotations

import numpy as np

from . import _validate as check
from . import theory
from .data import Dataset
from .domain import same_universe
from .mechanisms import _exponential, exponential
from .median import check_candidates, small_databases
from .privacy import PrivacyBudget, ZCDPBudget, _charge, check_budget
from .queries import Workload
from .results import Result, Round

Seed = np.random.Generator | int

#: Candidate answers are computed in chunks of at most this many (candidate, query) entries.
CHUNK_ENTRIES = 2**22


def _check_inputs(data: Dataset, workload: Workload) -> None:
    same_universe(Dataset.check(data), Workload.check(workload))


def _check_enumerable(domain_size: int, m: int, k: int) -> int:
    """Refuse, before any allocation (and before any charge), a candidate set that is too large;
    return its size. Every limit :func:`smalldb` meets later is checked here: the candidate count
    and matrix (:func:`dpteach.median.check_candidates`, estimated with ``lgamma`` first), the
    dense limit on ``count x |X|`` and the query matrix."""
    try:
        count = check_candidates(domain_size, m)
        check.dense_size(count * domain_size, "the candidate databases' histograms")
    except ValueError as err:
        raise ValueError(
            f"SmallDB cannot enumerate its candidates (a larger alpha gives a smaller m): {err}"
        ) from None
    check.dense_size(k * domain_size, "the query matrix")
    return count


def scores(candidates: np.ndarray, matrix: np.ndarray, true_answers: np.ndarray) -> np.ndarray:
    """``-max_q |q(y) - q(x)|`` for every candidate ``y`` (a row of ``candidates``).

    Vectorised over candidates x queries, in chunks of at most :data:`CHUNK_ENTRIES` entries so
    that memory stays bounded. Sensitivity ``1/n`` under replace-one neighbours: each ``q(x)``
    moves by at most ``1/n``, hence so does the max.
    """
    rows = max(1, CHUNK_ENTRIES // max(1, matrix.shape[0]))
    out = np.empty(candidates.shape[0])
    for start in range(0, candidates.shape[0], rows):
        block = candidates[start : start + rows] @ matrix.T
        out[start : start + rows] = -np.max(np.abs(block - true_answers), axis=1)
    return out


def _prepared(data: Dataset, workload: Workload, alpha: float, m: int | None):
    _check_inputs(data, workload)
    alpha = check.positive(alpha, "alpha")
    if alpha >= 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    m = theory.smalldb_size(workload.k, alpha) if m is None else check.integer(m, "m", minimum=1)
    count = _check_enumerable(data.domain.size, m, workload.k)
    return alpha, m, count


def smalldb(
    data: Dataset,
    workload: Workload,
    *,
    epsilon: float,
    alpha: float,
    rng: Seed,
    m: int | None = None,
    budget: PrivacyBudget | ZCDPBudget | None = None,
) -> Result:
    """SmallDB: a synthetic database of ``m`` records chosen by the exponential mechanism.

    Candidates: every database of ``m`` records over the universe (enumerated once by
    :func:`dpteach.median.small_databases`); score ``u(x, y) = -max_{q in Q} |q(x) - q(y)|``;
    the candidate is drawn with probability ``∝ exp(eps u(x, y) / (2/n))``.

    Guarantee: ``epsilon``-DP under replace-one neighbours (the exponential mechanism with score
    sensitivity ``1/n``; Dwork-Roth Thm 3.10). The candidate set depends only on ``|X|`` and ``m``
    (public), so a refusal for size reveals nothing. Accuracy: max error at most
    :func:`dpteach.theory.smalldb_max_error` with probability ``1 - beta``.

    Parameters
    ----------
    data
        The private database.
    workload
        The queries ``Q`` (over the same universe as ``data``).
    epsilon
        Privacy parameter, > 0.
    alpha
        Target accuracy in (0, 1); sets ``m = ceil(ln|Q| / alpha^2)`` unless ``m`` is given.
    rng
        Generator (consumed) or seed.
    m
        Size of the candidate databases (default from ``alpha``).
    budget
        Charged ``epsilon`` (a :class:`~dpteach.privacy.ZCDPBudget`: ``epsilon^2/2``, through
        :func:`dpteach.privacy.charge`) after every check and before any candidate is scored.

    Returns
    -------
    Result
        ``synthetic`` is the chosen database's normalised histogram, ``answers`` its answers to
        ``workload``; ``info`` holds ``m``, ``candidates`` (their number) and ``privacy``; the
        one-round trace records the chosen database's true max error (a non-private diagnostic).

    Raises
    ------
    ValueError
        If the candidate set is too large to enumerate (its size and the limit are given); nothing
        is charged.
    """
    alpha, m, count = _prepared(data, workload, alpha, m)
    epsilon = check.positive(epsilon, "epsilon")
    gen = check.rng(rng)
    _charge(check_budget(budget), epsilon,
            label=f"SmallDB (exponential mechanism over {count:,} databases)")  # fmt: skip
    candidates = small_databases(data.domain.size, m)
    true = workload._answer(data.histogram())
    u = scores(candidates, workload.matrix(), true)
    chosen = _exponential(u, 1 / data.n, epsilon, gen)  # epsilon checked above
    synthetic = candidates[chosen]
    info = {
        "m": m,
        "alpha": alpha,
        "candidates": count,
        "privacy": f"{epsilon:g}-DP under replace-one neighbours (exponential mechanism, "
        f"score sensitivity 1/n = 1/{data.n})",
    }
    trace = [Round(1, query=None, max_error=float(-u[chosen]), epsilon_spent=epsilon)]
    return Result(synthetic, workload._answer(synthetic), trace, info=info)


def audit_sampler(workload: Workload, *, epsilon: float, alpha: float, m: int | None = None):
    """A sampler for :func:`dpteach.audit.audit`: ``sampler(data, rng, size)`` returns ``size``
    independent SmallDB choices (candidate indices) on the :class:`~dpteach.data.Dataset`
    ``data``, through the same scores and exponential mechanism as :func:`smalldb`."""
    epsilon = check.positive(epsilon, "epsilon")

    def sampler(data: Dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        _, m_used, _ = _prepared(data, workload, alpha, m)
        candidates = small_databases(data.domain.size, m_used)
        u = scores(candidates, workload.matrix(), workload._answer(data.histogram()))
        return exponential(u, sensitivity=1 / data.n, epsilon=epsilon, rng=rng, size=size)

    return sampler
