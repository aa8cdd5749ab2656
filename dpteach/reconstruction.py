"""Reconstruction attacks: too-accurate answers to many subset-sum queries reveal the data.

The setting of Dinur and Nissim (2003): a secret database ``d`` in ``{0, 1}^n``, one private bit
per person; a query is a subset ``S`` of the ``n`` people, written as a 0/1 row ``q``, and its true
answer is the subset sum ``q . d``. A mechanism answers ``m`` queries *within error* ``E`` if
``|a_j - q_j . d| <= E`` for every ``j``. Chapter 06, Part 1:

* :func:`exhaustive_attack`, Dinur and Nissim's exponential attack (Dwork-Roth §8.1): from
  answers within ``E`` to all ``2^n`` subset sums, *every* database consistent with them agrees
  with ``d`` on all but at most ``4E`` bits; :func:`decoy_answers` shows the ``4`` is tight;
* :func:`lp_decode` and :func:`reconstruct`, the polynomial attack: LP decoding (minimise the
  total violation ``sum_j |a_j - q_j . x|`` over ``0 <= x <= 1``, the form of Dwork, McSherry and
  Talwar 2007) and rounding at 1/2, and :func:`feasibility_decode`, Dinur and Nissim's own
  program (any ``0 <= x <= 1`` with every ``|a_j - q_j . x| <= E``). Dinur and Nissim prove that
  ``n lg^2 n`` random queries (``lg = log2``) answered within ``E = o(sqrt n)`` let theirs
  recover all but ``o(n)`` bits with high probability; Dwork, McSherry and Talwar that the L1
  objective also survives a fraction of arbitrarily wrong answers (:func:`corrupt`);
* :func:`laplace_answers`, the same queries answered with differential privacy, against which
  no attacker recovers more than a fraction ``e^eps / (1 + e^eps)`` of the bits of a uniformly
  random secret in expectation (:func:`dpteach.theory.reconstruction_bound`).

Neighbouring relation: replace-one, i.e. one person's bit changes. A subset sum then changes by
at most 1, and the vector of ``m`` answers by at most ``max_i sum_j |q_ji|`` (the most queries
one person is in) in L1 (:func:`answers_sensitivity`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _validate as check
from .mechanisms import Seed, _safe_laplace_noise, laplace, safe_laplace_grid
from .privacy import PrivacyBudget, ZCDPBudget

#: Largest number of bits of the exhaustive attack: it checks all ``2^n`` candidates against all
#: ``2^n`` queries, ``4^n`` sums (``2^28`` at ``n = 14``, a few seconds).
MAX_EXHAUSTIVE_BITS = 14

#: Largest query matrix LP decoding accepts, in cells ``m * n``: HiGHS takes about 0.3 s at
#: ``n = 200, m = 800`` (160,000 cells) on one core, and the time grows faster than the size.
MAX_LP_CELLS = 4_000_000

#: Candidates checked at once by :func:`exhaustive_attack` (bounds its memory to ~2^22 sums).
_CHUNK_SUMS = 2**22


def secret_bits(n: int, *, rng: Seed) -> np.ndarray:
    """A uniformly random secret database: ``n`` independent fair bits (``int8``)."""
    n = check.integer(n, "n", minimum=1)
    check.dense_size(n, "the secret database", itemsize=1)
    return check.rng(rng).integers(0, 2, size=n, dtype=np.int8)


def subset_queries(m: int, n: int, *, rng: Seed, weights: str = "subset") -> np.ndarray:
    """``m`` random queries on ``n`` people, one per row (``float64``).

    ``weights="subset"``: uniformly random subsets (each person in each query with probability
    1/2, independently), the subset-sum queries of Dinur and Nissim. ``weights="gaussian"``:
    standard normal weights, the *weighted* subset sums of Dwork, McSherry and Talwar, whose
    sharp threshold ``rho* ~ 0.239`` is proved for this ensemble.
    """
    m = check.integer(m, "m", minimum=1)
    n = check.integer(n, "n", minimum=1)
    if weights not in ("subset", "gaussian"):
        raise ValueError(f"weights must be 'subset' or 'gaussian', got {weights!r}")
    check.dense_size(m * n, "the query matrix (m * n)")
    gen = check.rng(rng)
    if weights == "subset":
        return gen.integers(0, 2, size=(m, n)).astype(float)
    return gen.standard_normal((m, n))


def all_subset_queries(n: int) -> np.ndarray:
    """All ``2^n`` subsets of ``n`` people as 0/1 rows; row ``s`` is the binary expansion of
    ``s`` (person ``i`` is in it iff bit ``i`` of ``s`` is 1). ``n`` at most
    :data:`MAX_EXHAUSTIVE_BITS`."""
    n = _exhaustive_bits(n)
    return ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(float)


def _exhaustive_bits(n: object) -> int:
    n = check.integer(n, "n", minimum=1)
    if n > MAX_EXHAUSTIVE_BITS:
        raise ValueError(
            f"n must be at most {MAX_EXHAUSTIVE_BITS} for the exhaustive attack (it checks "
            f"4^n = 2^{2 * n} sums), got {n}; use lp_decode for larger databases"
        )
    return n


def _queries(queries: object, n: int | None = None) -> np.ndarray:
    q = check.array(queries, "queries", ndim=2)
    if q.shape[0] == 0 or q.shape[1] == 0:
        raise ValueError(f"queries must have at least one row and one column, got {q.shape}")
    if n is not None and q.shape[1] != n:
        raise ValueError(f"queries must have n = {n} columns (one per person), got {q.shape[1]}")
    return q


def _bits(secret: object, name: str = "secret") -> np.ndarray:
    d = check.array(secret, name, ndim=1)
    if d.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all((d == 0) | (d == 1)):
        raise ValueError(f"{name} must hold bits (0 or 1 in every entry)")
    return d


def _answers(answers: object, m: int) -> np.ndarray:
    a = check.array(answers, "answers", ndim=1)
    if a.size != m:
        raise ValueError(f"answers must have one entry per query (m = {m}), got {a.size}")
    return a


def exact_answers(queries: object, secret: object) -> np.ndarray:
    """The true answers ``q_j . d`` (exact: integer sums for subset queries)."""
    d = _bits(secret)
    return _queries(queries, d.size) @ d


def bounded_answers(queries: object, secret: object, *, error: float, rng: Seed) -> np.ndarray:
    """Answers within error ``E``: ``q_j . d + U_j``, ``U_j`` uniform on ``[-E, E]``, independent.

    The theorems hold for *every* mechanism within error ``E``; uniform noise is one such
    mechanism (the worst case for the exhaustive attack is :func:`decoy_answers`). No privacy
    is claimed.
    """
    error = check.nonnegative(error, "error")
    exact = exact_answers(queries, secret)
    return exact + check.rng(rng).uniform(-error, error, size=exact.size)


def decoy_answers(queries: object, secret: object, decoy: object) -> np.ndarray:
    """Answers halfway between the secret's and a decoy database's: ``(q . d + q . c) / 2``.

    For 0/1 queries their error is ``|q . (c - d)| / 2 <= max(|I_0|, |I_1|) / 2``, where
    ``I_0`` (``I_1``) are the people whose bit the decoy turns from 0 to 1 (from 1 to 0). With
    ``|I_0| = |I_1| = 2E`` every answer is within ``E`` of *both* databases, which differ in
    ``4E`` bits: no attacker can tell them apart, so the ``4E`` of the exhaustive attack is tight.
    """
    d, c = _bits(secret), _bits(decoy, "decoy")
    if c.size != d.size:
        raise ValueError(f"decoy must have the secret's length {d.size}, got {c.size}")
    q = _queries(queries, d.size)
    return (q @ d + q @ c) / 2


def corrupt(answers: object, replacement: object, *, fraction: float, rng: Seed) -> np.ndarray:
    """``answers`` with ``floor(fraction * m)`` of them, chosen at random, replaced by the
    same entries of ``replacement`` (e.g. a decoy database's exact answers: wrong answers that
    tell a consistent lie). The setting of Dwork, McSherry and Talwar: a fraction ``rho`` of
    arbitrarily wrong answers."""
    a = check.array(answers, "answers", ndim=1)
    r = _answers(replacement, a.size)
    fraction = check.real(fraction, "fraction")
    if not 0 <= fraction <= 1:
        raise ValueError(f"fraction must be in [0, 1], got {fraction}")
    wrong = check.rng(rng).permutation(a.size)[: math.floor(fraction * a.size)]
    out = a.copy()
    out[wrong] = r[wrong]
    return out


def answers_sensitivity(queries: object) -> float:
    """L1 sensitivity of the ``m`` answers under replace-one neighbours (one bit changes):
    ``max_i sum_j |q_ji|``, the most total weight one person carries (for subset queries: the
    most queries one person is in, at most ``m``)."""
    return float(np.abs(_queries(queries)).sum(axis=0).max())


def laplace_answers(
    queries: object,
    secret: object,
    *,
    epsilon: float,
    rng: Seed,
    budget: PrivacyBudget | ZCDPBudget | None = None,
    size: int | None = None,
) -> np.ndarray:
    """The ``m`` answers with Laplace noise: ``epsilon``-DP for the whole release.

    Guarantee: ``epsilon``-DP under replace-one neighbours (one person's bit changes), by the
    Laplace mechanism (:func:`dpteach.laplace`, floating-point safe) at the L1 sensitivity
    ``Delta = max_i sum_j |q_ji|`` of the answer vector (:func:`answers_sensitivity`). Each
    answer alone (sensitivity 1) gets noise of scale ``Delta / epsilon``, i.e. is
    ``eps_q = epsilon / Delta``-DP: answering every query at ``eps_q`` *is* this release with
    ``epsilon = eps_q * Delta`` (at most ``m eps_q``, basic composition's total). The queries
    are public, so ``Delta`` depends on no private value. ``budget`` is charged ``epsilon`` (a
    :class:`~dpteach.privacy.ZCDPBudget`: ``epsilon^2/2``) after every input was checked and
    before any noise is drawn; a refusal releases nothing.

    ``size`` draws that many independent releases at once, one per row (for simulation and
    auditing; each row is a separate ``epsilon``-DP release, distributed as a call without
    ``size``, on the same grid; it cannot be combined with a ``budget``).
    """
    exact = exact_answers(queries, secret)
    sensitivity = answers_sensitivity(queries)
    if size is None:
        return laplace(exact, sensitivity=sensitivity, epsilon=epsilon, rng=rng, budget=budget)
    size = check.integer(size, "size", minimum=1)
    if budget is not None:
        raise ValueError("size (repeated releases) cannot be combined with a budget")
    check.dense_size(size * exact.size, "size * m (the releases)")
    grid = safe_laplace_grid(sensitivity, check.positive(epsilon, "epsilon"), k=exact.size)
    rows = np.broadcast_to(exact, (size, exact.size))
    return _safe_laplace_noise(rows, grid, check.rng(rng))


def lp_decode(queries: object, answers: object) -> np.ndarray:
    """LP decoding: ``argmin_x sum_j |a_j - q_j . x|`` subject to ``0 <= x <= 1``.

    The linear program of Dwork, McSherry and Talwar (2007), solved with HiGHS
    (``scipy.optimize.linprog(method="highs")``) in the form ``min sum_j (u_j + v_j)`` subject to
    ``Q x + u - v = a``, ``u, v >= 0``. Unlike Dinur and Nissim's feasibility LP (``|a_j - q_j .
    x| <= E`` for all ``j``) it needs no ``E`` and stays meaningful when some answers are
    arbitrarily wrong. Returns the fractional ``x``; :func:`reconstruct` rounds it. Refuses
    (before building the LP) a query matrix of more than :data:`MAX_LP_CELLS` cells.
    """
    from scipy import optimize, sparse  # imported here: scipy.optimize takes ~0.2 s to import

    q = _queries(queries)
    m, n = q.shape
    a = _answers(answers, m)
    _lp_size(m, n)
    eye = sparse.identity(m, format="csr")
    constraints = sparse.hstack([sparse.csr_matrix(q), eye, -eye], format="csr")
    cost = np.r_[np.zeros(n), np.ones(2 * m)]
    bounds = [(0.0, 1.0)] * n + [(0.0, None)] * (2 * m)
    result = optimize.linprog(cost, A_eq=constraints, b_eq=a, bounds=bounds, method="highs")
    if result.status != 0:  # pragma: no cover (the LP is always feasible and bounded)
        raise RuntimeError(f"LP decoding failed: {result.message}")
    return np.clip(result.x[:n], 0.0, 1.0)


def feasibility_decode(queries: object, answers: object, *, error: float) -> np.ndarray:
    """Dinur and Nissim's polynomial attack: *any* ``x`` with ``0 <= x <= 1`` and
    ``|a_j - q_j . x| <= E`` for every query (the vertex HiGHS finds), to be rounded at 1/2.

    Feasible whenever the answers are within ``E`` of a database (the secret is a solution);
    with ``n lg^2 n`` random subset queries (``lg = log2``) and ``E = o(sqrt n)`` every such
    ``x`` rounds to all but ``o(n)`` bits of the secret with high probability (Dinur and Nissim
    2003). A ``ValueError`` if no ``x`` is within ``E`` of every answer (some answer is wrong by
    more: then use :func:`lp_decode`). Same size limit as :func:`lp_decode`.
    """
    from scipy import optimize, sparse

    q = _queries(queries)
    m, n = q.shape
    a = _answers(answers, m)
    error = check.nonnegative(error, "error")
    _lp_size(m, n)
    constraints = sparse.vstack([sparse.csr_matrix(q), -sparse.csr_matrix(q)], format="csr")
    result = optimize.linprog(np.zeros(n), A_ub=constraints, b_ub=np.r_[a + error, error - a],
                              bounds=(0.0, 1.0), method="highs")  # fmt: skip
    if result.status == 2:
        raise ValueError(f"no x in [0, 1]^n is within error = {error:g} of every answer")
    if result.status != 0:  # pragma: no cover
        raise RuntimeError(f"the feasibility LP failed: {result.message}")
    return np.clip(result.x, 0.0, 1.0)


def _lp_size(m: int, n: int) -> None:
    if m * n > MAX_LP_CELLS:
        raise ValueError(
            f"the LP's query matrix has m * n = {m * n:,} cells, more than MAX_LP_CELLS = "
            f"{MAX_LP_CELLS:,} (dpteach.reconstruction.MAX_LP_CELLS; raise it if you can wait)"
        )


def reconstruct(queries: object, answers: object) -> np.ndarray:
    """The attacker's guess: :func:`lp_decode` rounded, bit ``i`` is 1 iff ``x_i > 1/2``."""
    return (lp_decode(queries, answers) > 0.5).astype(np.int8)


def fraction_recovered(guess: object, secret: object) -> float:
    """The fraction of bits the guess gets right (1/2 is a coin flip's expectation)."""
    g, d = _bits(guess, "guess"), _bits(secret)
    if g.size != d.size:
        raise ValueError(f"guess must have the secret's length {d.size}, got {g.size}")
    return float(np.mean(g == d))


def exhaustive_attack(queries: object, answers: object, *, error: float) -> np.ndarray:
    """Dinur and Nissim's exponential attack: every database consistent with the answers.

    Returns the candidates ``c`` in ``{0, 1}^n`` (one per row) with ``|a_j - q_j . c| <= E`` for
    all ``j``. If the answers are within ``E`` of the secret ``d``, then ``d`` is among them,
    and when the queries are all ``2^n`` subsets (:func:`all_subset_queries`) *every* candidate
    differs from ``d`` in at most ``4E`` bits (Dinur and Nissim 2003; Dwork-Roth §8.1): the
    zeros of ``d`` that ``c`` sets to 1 form a query ``I_0`` with ``d(I_0) = 0`` and
    ``c(I_0) = |I_0|``, both within ``E`` of the answer, so ``|I_0| <= 2E``; likewise for the ones.
    Exponential time: ``n`` at most :data:`MAX_EXHAUSTIVE_BITS`.
    """
    q = _queries(queries)
    n = _exhaustive_bits(q.shape[1])
    a = _answers(answers, q.shape[0])
    error = check.nonnegative(error, "error")
    check.dense_size(q.shape[0] * 2**n, "the exhaustive attack's sums (queries * 2^n)")
    candidates = all_subset_queries(n)
    chunk = max(1, _CHUNK_SUMS // q.shape[0])
    # sums of 0/1 (or small integer) entries are exact in float64, whatever the BLAS kernel
    consistent = np.concatenate([
        np.all(np.abs(candidates[s : s + chunk] @ q.T - a) <= error, axis=1)
        for s in range(0, candidates.shape[0], chunk)
    ])  # fmt: skip
    return candidates[consistent].astype(np.int8)


@dataclass(frozen=True)
class Attack:
    """One run of the LP attack (:func:`lp_attack`): the secret, the (public) queries, the
    fractional LP solution ``decoded``, the rounded ``guess`` and the ``fraction`` of bits it
    recovers."""

    secret: np.ndarray
    queries: np.ndarray
    decoded: np.ndarray
    guess: np.ndarray
    fraction: float


def lp_attack(
    n: int,
    m: int,
    *,
    rng: Seed,
    error: float | None = None,
    epsilon: float | None = None,
    weights: str = "subset",
) -> Attack:
    """A fresh secret of ``n`` bits, ``m`` random queries, answered within ``error``
    (:func:`bounded_answers`) or with ``epsilon``-DP Laplace noise (:func:`laplace_answers`;
    exactly one of the two), and LP decoding: the experiment of chapter 06 in one call."""
    if (error is None) == (epsilon is None):
        raise ValueError("give exactly one of error (bounded noise) and epsilon (Laplace noise)")
    n = check.integer(n, "n", minimum=1)
    m = check.integer(m, "m", minimum=1)
    if error is not None:
        error = check.nonnegative(error, "error")
    else:
        epsilon = check.positive(epsilon, "epsilon")
    if m * n > MAX_LP_CELLS:  # refuse before drawing anything
        raise ValueError(f"m * n = {m * n:,} is more than MAX_LP_CELLS = {MAX_LP_CELLS:,}")
    gen = check.rng(rng)
    secret = secret_bits(n, rng=gen)
    queries = subset_queries(m, n, rng=gen, weights=weights)
    if error is not None:
        answers = bounded_answers(queries, secret, error=error, rng=gen)
    else:
        answers = laplace_answers(queries, secret, epsilon=epsilon, rng=gen)
    decoded = lp_decode(queries, answers)
    guess = (decoded > 0.5).astype(np.int8)
    return Attack(secret, queries, decoded, guess, fraction_recovered(guess, secret))
