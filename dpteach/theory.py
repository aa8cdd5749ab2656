"""The lectures' bounds as plain functions, to plot measured results against.

Each function names the theorem it implements. Conventions: ``k`` linear queries with values in
[0, 1], a database of ``n`` records, replace-one neighbours (sensitivity ``1/n`` per query), and
``beta`` the failure probability.
"""

from __future__ import annotations

import math

import numpy as np

from . import _validate as check
from .mechanisms import gaussian_sigma


def _common(k: int, n: int, epsilon: float, beta: float) -> tuple[int, int, float, float]:
    return (
        check.integer(k, "k", minimum=1),
        check.integer(n, "n", minimum=1),
        check.positive(epsilon, "epsilon"),
        check.probability(beta, "beta"),
    )


def laplace_max_error(k: int, n: int, epsilon: float, beta: float = 0.05) -> float:
    """Max error over ``k`` queries answered with Laplace noise, w.p. ``>= 1 - beta``.

    The L1 sensitivity of the ``k`` answers is ``k/n``, so each gets ``Lap(k / (n eps))``
    (Dwork-Roth Thm 3.6) and a union bound over ``P[|Lap(b)| > b t] = e^{-t}`` gives
    ``max_i |error_i| <= (k / (n eps)) ln(k / beta)`` (Dwork-Roth Thm 3.8). Grows like k log k.
    """
    k, n, epsilon, beta = _common(k, n, epsilon, beta)
    return k / (n * epsilon) * math.log(k / beta)


def laplace_expected_max_error(k: int, n: int, epsilon: float) -> float:
    """``E[max_i |Lap(b)_i|] = b H_k`` with ``b = k / (n eps)``: the max of ``k`` i.i.d.
    exponentials has mean ``b (1 + 1/2 + ... + 1/k)`` (an exact formula, not a bound)."""
    k, n, epsilon, _ = _common(k, n, epsilon, 0.5)
    harmonic = float(np.sum(1.0 / np.arange(1, k + 1)))
    return k / (n * epsilon) * harmonic


def gaussian_max_error(
    k: int, n: int, epsilon: float, delta: float, beta: float = 0.05, calibration: str = "analytic"
) -> float:
    """Max error over ``k`` queries answered with Gaussian noise, w.p. ``>= 1 - beta``.

    The L2 sensitivity of the ``k`` answers is ``sqrt(k)/n``; with ``sigma`` from
    :func:`~dpteach.mechanisms.gaussian_sigma` and the tail ``P[|N(0, s^2)| > s t] <= 2 e^{-t^2/2}``
    a union bound gives ``max_i |error_i| <= sigma sqrt(2 ln(2k / beta))``. Grows like
    ``sqrt(k log k)``.
    """
    k, n, epsilon, beta = _common(k, n, epsilon, beta)
    sigma = gaussian_sigma(math.sqrt(k) / n, epsilon, delta, calibration=calibration)
    return sigma * math.sqrt(2 * math.log(2 * k / beta))


def exponential_mechanism_error(
    num_outcomes: int, sensitivity: float, epsilon: float, beta: float = 0.05
) -> float:
    """Utility loss of the exponential mechanism, w.p. ``>= 1 - beta``:
    ``OPT - u(chosen) <= 2 Delta ln(R / beta) / eps`` (Dwork-Roth Thm 3.11)."""
    r = check.integer(num_outcomes, "num_outcomes", minimum=1)
    sensitivity = check.positive(sensitivity, "sensitivity")
    epsilon = check.positive(epsilon, "epsilon")
    beta = check.probability(beta, "beta")
    return 2 * sensitivity * math.log(r / beta) / epsilon


# --- Private multiplicative weights (Nikolov, CSC2412) ------------------------------------------


def mw_mistake_bound(domain_size: int, alpha: float) -> float:
    """``4 ln|X| / alpha^2``: the most mistakes the MW learner with ``eta = alpha/2`` makes.

    Facts 1-3 of the lecture: ``D(p || p_hat_0) <= ln|X|`` (uniform start), the potential is
    never negative, and each mistake lowers it by at least ``eta alpha - eta^2 = alpha^2/4``.
    """
    size = check.integer(domain_size, "domain_size", minimum=1)
    return 4 * math.log(size) / check.positive(alpha, "alpha") ** 2


def private_mw_sample_size(
    domain_size: int, k: int, alpha: float, epsilon: float, beta: float = 0.05
) -> float:
    """The ``n`` from which offline private MW is ``3 alpha``-accurate w.p. ``>= 1 - beta``.

    With ``L = ceil(4 ln|X| / alpha^2)`` rounds at ``eps_0 = eps / (2L)``, the exponential
    mechanism over the ``2k`` negation-closed queries loses at most ``2 ln(4kL/beta) / (n eps_0)``
    and the Laplace noise is at most ``ln(2L/beta) / (n eps_0)`` in every round, except with
    probability ``beta`` (union bound over ``2L`` events). Both are at most ``alpha/2`` once
    ``n >= 8 L ln(4kL/beta) / (eps alpha)``, about ``32 ln|X| ln(4kL/beta) / (eps alpha^3)``.
    Then an update round has gap ``> 3 alpha / 2`` (potential drop ``>= alpha^2/2``, so the run
    stops within ``L`` rounds) and the stopping round certifies error ``<= 3 alpha``.
    """
    k = check.integer(k, "k", minimum=1)
    epsilon = check.positive(epsilon, "epsilon")
    beta = check.probability(beta, "beta")
    rounds = math.ceil(mw_mistake_bound(domain_size, alpha))
    return 8 * rounds * math.log(4 * k * rounds / beta) / (epsilon * alpha)


def private_mw_alpha(domain_size: int, k: int, n: int, epsilon: float, beta: float = 0.05) -> float:
    """The smallest ``alpha`` whose :func:`private_mw_sample_size` is at most ``n``
    (bisection; the run is then ``3 alpha``-accurate w.p. ``1 - beta``), or ``1.0`` if none is."""
    n = check.integer(n, "n", minimum=1)
    lo, hi = 1e-4, 0.999
    if private_mw_sample_size(domain_size, k, hi, epsilon, beta) > n:
        return 1.0
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        if private_mw_sample_size(domain_size, k, mid, epsilon, beta) <= n:
            hi = mid
        else:
            lo = mid
    return hi


# --- Iterative database construction (Roth, Lecture 7) ------------------------------------------


def ic_epsilon0(epsilon: float, bound: float, delta: float = 0.0) -> float:
    """Per-step privacy of the IC mechanism (Lecture 7, Theorem 4) run for ``B = B(alpha/2)``
    rounds: ``eps / (2B)`` for ``eps``-DP, ``eps / (4 sqrt(B ln(1/delta)))`` for
    ``(eps, delta)``-DP."""
    epsilon = check.positive(epsilon, "epsilon")
    bound = check.positive(bound, "bound")
    delta = check.delta(delta)
    if delta == 0:
        return epsilon / (2 * bound)
    return epsilon / (4 * math.sqrt(bound * math.log(1 / delta)))


def ic_sample_size(
    bound: float, k: int, alpha: float, epsilon: float, beta: float = 0.05, delta: float = 0.0
) -> float:
    """The ``n`` from which the IC mechanism is ``alpha``-accurate w.p. ``1 - beta``
    (Lecture 7, Theorem 8, from Theorems 5-7; our constants).

    In each of the ``B`` rounds the exponential distinguisher loses at most
    ``2 ln(2kB/beta) / (n eps_0)`` (Thm 6) and the Laplace estimate errs by at most
    ``ln(2B/beta) / (n eps_0)`` (Thm 7), except w.p. ``beta`` overall. If together they are at most
    ``alpha/4``, every update is on an ``alpha/2``-distinguishing query (so at most ``B(alpha/2)``
    of them, Thm 5) and the stopping round certifies error ``< alpha``. That holds once
    ``n >= 4 (2 ln(2kB/beta) + ln(2B/beta)) / (alpha eps_0)``, ``B = bound = B(alpha/2)``.
    """
    k = check.integer(k, "k", minimum=1)
    alpha = check.positive(alpha, "alpha")
    beta = check.probability(beta, "beta")
    rounds = math.ceil(check.positive(bound, "bound"))
    eps0 = ic_epsilon0(epsilon, bound, delta)
    losses = 2 * math.log(2 * k * rounds / beta) + math.log(2 * rounds / beta)
    return 4 * losses / (alpha * eps0)


def ic_alpha(
    bound_of_alpha, k: int, n: int, epsilon: float, beta: float = 0.05, delta: float = 0.0
) -> float:
    """The smallest ``alpha`` that :func:`ic_sample_size` guarantees at ``n`` (bisection);
    ``bound_of_alpha(alpha)`` is the DUA's ``B(alpha/2)``. Returns 1.0 if none below 1 works."""
    n = check.integer(n, "n", minimum=1)

    def enough(a: float) -> bool:
        return ic_sample_size(bound_of_alpha(a), k, a, epsilon, beta, delta) <= n

    lo, hi = 1e-4, 1.0
    if not enough(hi):
        return 1.0
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


# --- Projection mechanism and Gaussian width (chapter 03; its recap of four mechanisms) ---------


def smalldb_size(k: int, alpha: float) -> int:
    """``m = ceil(ln|Q| / alpha^2)`` (at least 1): the size of SmallDB's candidate databases
    (Blum, Ligett and Roth 2008; the projection notes' recap, item 3).

    Why it suffices: ``m`` records drawn i.i.d. from ``x`` answer each query within ``alpha``
    except with probability ``2 e^{-2 m alpha^2}`` (Hoeffding), so all ``|Q|`` queries at once
    except with probability ``2|Q| e^{-2 m alpha^2} <= 2/|Q| < 1`` when ``|Q| >= 3``: some database
    of ``m`` records is ``alpha``-accurate for ``Q``.
    """
    k = check.integer(k, "k", minimum=1)
    alpha = check.positive(alpha, "alpha")
    return max(1, math.ceil(math.log(k) / alpha**2))


def smalldb_candidates(domain_size: int, m: int) -> int:
    """``C(|X| + m - 1, m)``: the number of databases of ``m`` records over ``X`` (multisets),
    at most ``|X|^m``."""
    size = check.integer(domain_size, "domain_size", minimum=1)
    return math.comb(size + check.integer(m, "m", minimum=1) - 1, m)


def smalldb_max_error(
    domain_size: int, k: int, n: int, epsilon: float, alpha: float, beta: float = 0.05
) -> float:
    """Max error of SmallDB w.p. ``>= 1 - beta``: ``alpha + 2 ln(C / beta) / (eps n)``.

    Some candidate of ``m = smalldb_size(k, alpha)`` records has error at most ``alpha``
    (:func:`smalldb_size`, for ``k >= 3``); the exponential mechanism over the ``C`` candidates
    (score sensitivity ``1/n``) loses at most ``2 ln(C/beta) / (eps n)`` (Dwork-Roth Thm 3.11).
    """
    k, n, epsilon, beta = _common(k, n, epsilon, beta)
    count = smalldb_candidates(domain_size, smalldb_size(k, alpha))
    return alpha + 2 * math.log(count / beta) / (epsilon * n)
