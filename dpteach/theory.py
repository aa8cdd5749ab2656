"""The lectures' bounds as plain functions, to plot measured results against.

Each function names the theorem it implements. Conventions: ``k`` linear queries with values in
[0, 1], a database of ``n`` records, replace-one neighbours (sensitivity ``1/n`` per query), and
``beta`` the failure probability.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

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
    if k > 2**1000:  # k / (n eps) overflows a double: the bound is vacuous
        return math.inf
    return k / (n * epsilon) * (math.log(k) - math.log(beta))


def laplace_expected_max_error(k: int, n: int, epsilon: float) -> float:
    """``E[max_i |Lap(b)_i|] = b H_k`` with ``b = k / (n eps)``: the max of ``k`` i.i.d.
    exponentials has mean ``b (1 + 1/2 + ... + 1/k)`` (an exact formula, not a bound)."""
    k, n, epsilon, _ = _common(k, n, epsilon, 0.5)
    if k > 2**1000:
        return math.inf
    # H_k = digamma(k + 1) + Euler's gamma: O(1) for any k (the sum for small k, for exactness)
    if k <= 1000:
        harmonic = math.fsum(1 / i for i in range(1, k + 1))
    else:
        harmonic = float(special.digamma(k + 1)) + float(np.euler_gamma)
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
    alpha = check.positive(alpha, "alpha")
    if size == 1:
        return 0.0  # nothing to learn (and no 0/0 when alpha^2 underflows)
    with np.errstate(divide="ignore", over="ignore"):
        return float(np.float64(4 * math.log(size)) / np.float64(alpha * alpha))


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
    bound = mw_mistake_bound(domain_size, alpha)
    if not math.isfinite(bound):  # alpha so small that alpha^2 underflows: no finite n works
        return math.inf
    rounds = math.ceil(bound)
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
    """Per-step privacy of the IC mechanism (Lecture 7, Theorem 4) run for ``B`` rounds, ``B``
    the number of rounds it runs (``ceil(B(alpha/2))``): ``eps / (2B)`` for ``eps``-DP (basic
    composition of ``2B`` steps), ``eps / (4 sqrt(B ln(1/delta)))`` for ``(eps, delta)``-DP
    (advanced composition: ``eps/2`` from the square-root term, and the ``2B eps_0 (e^eps_0 - 1)``
    term, about ``eps^2 / (8 ln(1/delta))``, stays below ``eps/2`` unless ``eps`` is near
    ``4 ln(1/delta)``). The second is the larger only when ``B > 4 ln(1/delta)``."""
    epsilon = check.positive(epsilon, "epsilon")
    bound = check.positive(bound, "bound")
    delta = check.delta(delta)
    if delta == 0:
        return epsilon / (2 * bound)
    return epsilon / (4 * math.sqrt(bound * math.log(1 / delta)))


def _ic_setting(bound: float, k: int, alpha: float, epsilon: float, beta: float, delta: float):
    k = check.integer(k, "k", minimum=1)
    alpha = check.positive(alpha, "alpha")
    beta = check.probability(beta, "beta")
    rounds = math.ceil(check.positive(bound, "bound"))
    return k, alpha, beta, rounds, ic_epsilon0(epsilon, rounds, delta)


def ic_sample_size(
    bound: float, k: int, alpha: float, epsilon: float, beta: float = 0.05, delta: float = 0.0
) -> float:
    """The ``n`` from which the IC mechanism is ``alpha``-accurate w.p. ``1 - beta`` (our form of
    Lecture 7, Theorem 8; ``bound = B(alpha/2)``, run for ``B = ceil(bound)`` rounds at
    :func:`ic_epsilon0` of ``B``).

    Per round, the exponential distinguisher loses at most ``A1 = 2 ln(2kB/beta) / (n eps_0)``
    (Theorem 6 with ``gamma = beta/(2B)``) and the Laplace estimate errs by at most
    ``A2 = ln(2B/beta) / (n eps_0)`` (the tail bound in the proof of Theorem 5), all ``2B``
    events together except w.p. ``beta``. An update round then has
    ``|q(D) - q(D^{t-1})| >= 3 alpha/4 - A2`` and a stopping round certifies error
    ``< 3 alpha/4 + A2 + A1``. Both are right once ``A1 + A2 <= alpha/4``, that is once
    ``n >= 4 (2 ln(2kB/beta) + ln(2B/beta)) / (alpha eps_0)``.
    The lecture asks only ``A1 <= alpha/2`` and ``A2 <= alpha/4``
    (:func:`ic_sample_size_lecture`); its proof of Theorem 5 bounds the stopping round's gap by
    ``alpha/2`` where ``3 alpha/4 + A2`` is all that follows, so that ``n`` certifies ``3 alpha/2``.
    """
    k, alpha, beta, rounds, eps0 = _ic_setting(bound, k, alpha, epsilon, beta, delta)
    losses = 2 * math.log(2 * k * rounds / beta) + math.log(2 * rounds / beta)
    return 4 * losses / (alpha * eps0)


def ic_sample_size_lecture(
    bound: float, k: int, alpha: float, epsilon: float, beta: float = 0.05, delta: float = 0.0
) -> float:
    """Lecture 7, Theorem 8 as the lecture states it, solved for ``n``: with
    ``gamma = beta / (2B)``, ``n >= 8 B ln(k/gamma) / (alpha eps)`` (pure) or
    ``n >= 16 sqrt(B ln(1/delta)) ln(k/gamma) / (alpha eps)`` (approximate), that is
    ``4 ln(2kB/beta) / (alpha eps_0)``; ``B = ceil(bound)`` as the mechanism runs.

    Because of the slip in the proof of Theorem 5 (see :func:`ic_sample_size`), this ``n``
    certifies error ``3 alpha / 2``, not ``alpha``.
    """
    k, alpha, beta, rounds, eps0 = _ic_setting(bound, k, alpha, epsilon, beta, delta)
    return 4 * math.log(2 * k * rounds / beta) / (alpha * eps0)


def _smallest_alpha(needed, n: int) -> float | None:
    """The smallest ``alpha`` in ``[1e-4, 1]`` with ``needed(alpha) <= n`` (``needed`` falls as
    ``alpha`` grows), by bisection to relative precision ~1e-15 (so at least ``1e-4``, even when
    ``n`` would allow less); ``None`` if even ``alpha = 1`` needs more than ``n``."""
    n = check.integer(n, "n", minimum=1)
    lo, hi = 1e-4, 1.0
    if needed(hi) > n:
        return None
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if needed(mid) <= n else (mid, hi)
    return hi


def ic_alpha(
    bound_of_alpha, k: int, n: int, epsilon: float, beta: float = 0.05, delta: float = 0.0
) -> float | None:
    """The smallest ``alpha`` that :func:`ic_sample_size` guarantees at ``n`` (our form of
    Theorem 8); ``bound_of_alpha(alpha)`` is the DUA's ``B(alpha/2)``.

    Returns ``None`` where the theorem gives no ``alpha < 1`` (error 1 needs no theorem: the
    queries take values in [0, 1]). Callers must handle it: there is nothing to plot there.
    """
    return _smallest_alpha(
        lambda a: ic_sample_size(bound_of_alpha(a), k, a, epsilon, beta, delta), n
    )


def ic_alpha_lecture(
    bound_of_alpha, k: int, n: int, epsilon: float, beta: float = 0.05, delta: float = 0.0
) -> float | None:
    """The smallest ``alpha`` of Theorem 8 as the lecture states it
    (:func:`ic_sample_size_lecture`), or ``None`` if none below 1; see there for what it
    certifies."""
    return _smallest_alpha(
        lambda a: ic_sample_size_lecture(bound_of_alpha(a), k, a, epsilon, beta, delta), n
    )


# --- Chapter 00: the Gaussian baseline's expected max error --------------------------------------


def gaussian_expected_max_error(k: int, n: int, epsilon: float, delta: float) -> float:
    """``E[max_i |N(0, sigma^2)_i|]`` over ``k`` i.i.d. coordinates, with the ``sigma`` of the
    Gaussian baseline (L2 sensitivity ``sqrt(k)/n``, analytic calibration): the exact mean,
    ``sigma * int_0^inf (1 - (2 Phi(t) - 1)^k) dt``, computed by quadrature (not a bound)."""
    from scipy import integrate, special

    k, n, epsilon, _ = _common(k, n, epsilon, 0.5)
    sigma = gaussian_sigma(math.sqrt(k) / n, epsilon, delta)
    # 1 - (1 - 2 Phi(-t))^k, written with log1p/expm1 so that it stays accurate in the far tail
    tail = lambda t: -math.expm1(k * math.log1p(-2 * special.ndtr(-t)))  # noqa: E731
    return sigma * integrate.quad(tail, 0, 40, limit=200)[0]
