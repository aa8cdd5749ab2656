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
from .privacy import _advanced_composition_step, advanced_composition_step


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
    ``sqrt(k log k)``. The package's noise is the discrete Gaussian, which is ``sigma^2``-
    subgaussian (Canonne, Kamath and Steinke 2020), so the same tail bound holds for it. Its grid
    spacing is at most ``1 / (2^11 n)`` (coarser only when the variance would leave the exact
    integer arithmetic), so whenever ``sigma >= 1/n`` the grid and sigma's rounding move the bound
    by about 0.1 % at most (:func:`~dpteach.mechanisms.gaussian_sigma` includes that rounding).
    """
    k, n, epsilon, beta = _common(k, n, epsilon, beta)
    sigma = gaussian_sigma(math.sqrt(k) / n, epsilon, delta, calibration=calibration)
    return sigma * math.sqrt(2 * math.log(2 * k / beta))


def gaussian_beats_laplace_k(
    n: int, epsilon: float, delta: float, beta: float = 0.05, k_max: int = 2**40
) -> int | None:
    """The smallest ``k`` from which the Gaussian baseline's bound (:func:`gaussian_max_error`)
    is below the Laplace baseline's (:func:`laplace_max_error`), at the same ``n``, ``epsilon``
    and ``beta``: the crossover of chapter 00 (both scale as ``1/n``, so it hardly depends on
    ``n``). ``None`` if there is none up to ``k_max``.

    The Laplace bound grows like ``k log k`` and the Gaussian one like ``sqrt(k log k)``, so
    their difference changes sign once: found by doubling ``k``, then bisection.
    """
    k_max = check.integer(k_max, "k_max", minimum=1)

    def gaussian_wins(k: int) -> bool:
        return gaussian_max_error(k, n, epsilon, delta, beta) < laplace_max_error(
            k, n, epsilon, beta
        )

    hi = 1
    while not gaussian_wins(hi):
        if hi >= k_max:
            return None
        hi = min(2 * hi, k_max)
    lo = hi // 2  # Laplace's bound is at most the Gaussian's at lo (or lo = 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if gaussian_wins(mid) else (mid, hi)
    return hi


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
    """``4 ln|X| / alpha^2``: the lecture's bound on the mistakes of the MW learner.

    The lecture's three facts: ``D(p || p_hat_0) <= ln|X|`` (uniform start), the potential is never
    negative, and (fact 3, with the lecture's ``eta = alpha``) each mistake lowers it by at least
    ``(eta/2) alpha - eta^2/4 = alpha^2/4``. The sharper ``e^{-y} <= 1 - y + y^2/2`` gives a drop
    ``> eta alpha - eta^2/2 = alpha^2/2`` at ``eta = alpha`` (half as many mistakes); with
    ``eta = alpha/2`` (Roth's MW DUA) ``e^{-y} <= 1 - y + y^2`` gives ``alpha^2/4``. Every one of
    these is within this bound.
    """
    size = check.integer(domain_size, "domain_size", minimum=1)
    alpha = check.positive(alpha, "alpha")
    if size == 1:
        return 0.0  # nothing to learn (and no 0/0 when alpha^2 underflows)
    with np.errstate(divide="ignore", over="ignore"):
        return float(np.float64(4 * math.log(size)) / np.float64(alpha * alpha))


def private_mw_rounds(domain_size: int, alpha: float) -> int:
    """``L = ceil(4 ln|X| / alpha^2)``: the rounds of the lecture's private MW (at least one)."""
    bound = mw_mistake_bound(domain_size, alpha)
    if not math.isfinite(bound):
        raise ValueError(f"alpha={alpha} is too small: 4 ln|X| / alpha^2 overflows")
    return max(1, math.ceil(bound))


def private_mw_epsilon0(
    epsilon: float, domain_size: int, alpha: float, delta: float = 0.0
) -> float:
    """Per-step privacy of private MW: ``2L`` steps (``L`` selections, ``L`` measurements).

    ``eps_0 = eps / (2L)`` for ``eps``-DP (basic composition; the lecture's choice,
    ``eps alpha^2 / (8 ln|X|)``), or ``eps / (2 sqrt(4L ln(1/delta)))`` for ``(eps, delta)``-DP
    (advanced composition, Dwork-Roth Cor. 3.21, ``eps <= 1``).
    """
    steps = 2 * private_mw_rounds(domain_size, alpha)
    if check.delta(delta) == 0:
        return check.positive(epsilon, "epsilon") / steps
    return advanced_composition_step(epsilon, steps, delta)


def _private_mw_epsilon0(epsilon: float, rounds: int, delta: float) -> float:
    """:func:`private_mw_epsilon0` for checked values and the run's ``rounds`` ``L``."""
    if delta == 0:
        return epsilon / (2 * rounds)
    return _advanced_composition_step(epsilon, 2 * rounds, delta)


def private_mw_sample_size(
    domain_size: int,
    k: int,
    alpha: float,
    epsilon: float,
    beta: float = 0.05,
    delta: float = 0.0,
) -> float:
    """The ``n`` from which offline private MW is ``3 alpha``-accurate w.p. ``>= 1 - beta``.

    In each of the ``L`` rounds the exponential mechanism over the ``2k`` negation-closed queries
    loses at most ``2 ln(4kL/beta) / (n eps_0)`` (Dwork-Roth Thm 3.11) and the Laplace noise is at
    most ``ln(2L/beta) / (n eps_0)``, except with probability ``beta`` in all (union bound over
    ``2L`` events). Both are at most ``alpha/2`` once ``n >= 4 ln(4kL/beta) / (eps_0 alpha)``,
    which is ``8 L ln(4kL/beta) / (eps alpha)`` for pure DP. Then an update round's true gap is
    ``> 3 alpha/2`` (so the run stops within ``L`` rounds) and the stopping round certifies every
    error ``<= 2 alpha + alpha/2 + alpha/2 = 3 alpha``.

    The lecture asks each error to be ``<= alpha`` and writes ``n >> 2L ln(kL/beta)/(eps alpha)``
    (:func:`private_mw_sample_size_lecture`); with errors up to ``alpha`` the stopping round only
    certifies ``4 alpha``, not the ``3 alpha`` its last line states. Asking ``alpha/2`` of each
    makes ``3 alpha`` true (a factor 2); the exponential mechanism's ``2 Delta`` and the union
    bound's ``4kL`` are the rest (a factor 2 and a larger logarithm).
    """
    k = check.integer(k, "k", minimum=1)
    beta = check.probability(beta, "beta")
    if not math.isfinite(mw_mistake_bound(domain_size, alpha)):
        return math.inf  # alpha so small that alpha^2 underflows: no finite n works
    rounds = private_mw_rounds(domain_size, alpha)
    eps0 = private_mw_epsilon0(epsilon, domain_size, alpha, delta)
    return 4 * math.log(4 * k * rounds / beta) / (eps0 * alpha)


def private_mw_sample_size_lecture(
    domain_size: int, k: int, alpha: float, epsilon: float, beta: float = 0.05
) -> float:
    """The lecture's sample size as written, ``2 L ln(kL/beta) / (eps alpha)`` (pure DP), with
    ``L = ceil(4 ln|X| / alpha^2)``; see :func:`private_mw_sample_size` for why ours is larger."""
    k = check.integer(k, "k", minimum=1)
    beta = check.probability(beta, "beta")
    rounds = private_mw_rounds(domain_size, alpha)
    return 2 * rounds * math.log(k * rounds / beta) / (check.positive(epsilon, "epsilon") * alpha)


def private_mw_alpha(
    domain_size: int, k: int, n: int, epsilon: float, beta: float = 0.05, delta: float = 0.0
) -> float:
    """The smallest ``alpha`` whose :func:`private_mw_sample_size` is at most ``n``
    (bisection; the run is then ``3 alpha``-accurate w.p. ``1 - beta``), or ``1.0`` if none is."""
    n = check.integer(n, "n", minimum=1)
    lo, hi = 1e-4, 0.999
    if private_mw_sample_size(domain_size, k, hi, epsilon, beta, delta) > n:
        return 1.0
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        if private_mw_sample_size(domain_size, k, mid, epsilon, beta, delta) <= n:
            hi = mid
        else:
            lo = mid
    return hi


def private_mw_onset(
    domain_size: int,
    k: int,
    alpha: float,
    epsilon: float,
    gap: float,
    beta: float = 0.5,
    delta: float = 0.0,
) -> float:
    """The ``n`` from which private MW's first round updates w.p. ``>= 1 - beta``: where it
    starts to learn. ``inf`` if ``gap <= 2 alpha``.

    ``gap`` is the uniform start's largest error ``max_q q(p_hat_0) - q(p)`` over the
    negation-closed workload (a property of the data). Round 1 updates when the selected query's
    gap minus the Laplace noise exceeds ``2 alpha``. W.p. ``1 - beta/2`` the selection loses at
    most ``2 ln(4k/beta) / (n eps_0)`` (Dwork-Roth Thm 3.11, ``2k`` candidates) and w.p.
    ``1 - beta/2`` the noise is below ``ln(1/beta) / (n eps_0)`` (one-sided Laplace tail), so
    ``n >= (2 ln(4k/beta) + ln(1/beta)) / (eps_0 (gap - 2 alpha))`` suffices. Unlike
    :func:`private_mw_sample_size` this depends on the data, through ``gap``.
    """
    k = check.integer(k, "k", minimum=1)
    beta = check.probability(beta, "beta")
    gap = check.real(gap, "gap")
    margin = gap - 2 * check.positive(alpha, "alpha")
    if margin <= 0 or not math.isfinite(mw_mistake_bound(domain_size, alpha)):
        return math.inf
    eps0 = private_mw_epsilon0(epsilon, domain_size, alpha, delta)
    return (2 * math.log(4 * k / beta) + math.log(1 / beta)) / (eps0 * margin)


def online_pmw_error(
    n: int, epsilon: float, alpha: float, max_hard: int, queries: int, beta: float = 0.05
) -> float:
    """Every answer of :class:`dpteach.mw.OnlinePMW` is within this of the truth, w.p. ``1 - beta``
    (as long as it has not halted).

    Sparse vector at ``eps/2`` with cutoff ``c`` draws the threshold noise from ``Lap(s)`` and each
    query's from ``Lap(2s)``, ``s = 2c/(n eps/2) = 4c/(n eps)`` (Dwork-Roth Alg. 2). An *easy*
    answer ``q(p_hat)`` has ``|q(p) - q(p_hat)| < alpha`` plus both noises; a *hard* answer has
    ``Lap(2c/(n eps))`` noise. A union bound (``beta/3`` each) over the ``c + 1`` thresholds, the
    ``queries`` comparisons and the ``c`` answers gives
    ``max(alpha + s ln(3(c+1)/beta) + 2s ln(3m/beta), (2c/(n eps)) ln(3c/beta))``.

    These are the continuous-Laplace scales; the class's floating-point-safe noise
    (:class:`~dpteach.mechanisms.Sparse`, :func:`~dpteach.mechanisms.laplace`) is discrete, on a
    fine grid, with scales slightly larger (Sparse: at most 0.1 %), which this bound ignores.
    """
    n = check.integer(n, "n", minimum=1)
    epsilon = check.positive(epsilon, "epsilon")
    alpha = check.positive(alpha, "alpha")
    c = check.integer(max_hard, "max_hard", minimum=1)
    m = check.integer(queries, "queries", minimum=1)
    beta = check.probability(beta, "beta")
    s = 4 * c / (n * epsilon)
    easy = alpha + s * math.log(3 * (c + 1) / beta) + 2 * s * math.log(3 * m / beta)
    hard = 2 * c / (n * epsilon) * math.log(3 * c / beta)
    return max(easy, hard)


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
    return _ic_epsilon0(epsilon, bound, check.delta(delta))


def _ic_epsilon0(epsilon: float, bound: float, delta: float) -> float:
    """:func:`ic_epsilon0` for checked values."""
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


def ic_noise_onset(bound: float, alpha: float, delta: float = 0.0) -> float:
    """The product ``n eps`` below which the IC mechanism's rounds are driven by noise: where
    the Laplace scale ``1/(n eps_0)`` of one estimate (Algorithm 1, step 2; ``eps_0`` from
    :func:`ic_epsilon0` with ``B = ceil(bound)``, ``bound = B(alpha/2)``) equals ``alpha/4``,
    the error the proof of Lecture 7, Theorem 5 allows an estimate. That is
    ``n eps = 8B/alpha`` for pure DP and ``16 sqrt(B ln(1/delta))/alpha`` for ``delta > 0``.

    Below it the Laplace scale exceeds ``alpha/4`` (not a single draw: each estimate's error is
    random), so estimates often err by more than ``alpha/4``: whether a round stops or updates,
    and in which direction, is decided mostly by the noise, so the KL potential can rise. It is
    a scale, not a guarantee: the guarantee (:func:`ic_sample_size`) asks that the worst of
    ``2B`` losses stay below ``alpha/4``, a factor ``2 ln(2kB/beta) + ln(2B/beta)`` more data.
    """
    alpha = check.positive(alpha, "alpha")
    rounds = math.ceil(check.positive(bound, "bound"))
    return 4 / (alpha * ic_epsilon0(1.0, rounds, delta))


# --- Growing databases (Cummings, Krehbiel, Lai, Tantipongpipat 2018) ---------------------------
#
# The paper's formulas did not survive into our copy of its text; the forms below are our
# reconstruction (derived in notebook 05). Time t is also the database size; the stream starts
# at n0; a linear query q: X -> [0, 1] has sensitivity 1/t at time t.


def staleness_bound(t: int, s: int) -> float:
    """Lemma 11: ``|q(x_t) - q(x_s)| <= (t - s) / t`` for ``t >= s`` and ``q: X -> [0, 1]``.

    ``x_t = (s/t) x_s + ((t-s)/t) y`` with ``y`` the histogram of the ``t - s`` new entries, so
    ``q(x_t) - q(x_s) = ((t-s)/t) (q(y) - q(x_s))`` and ``|q(y) - q(x_s)| <= 1``.
    """
    t = check.integer(t, "t", minimum=1)
    s = check.integer(s, "s", minimum=1)
    if s > t:
        raise ValueError(f"s must be at most t={t}, got {s}")
    return (t - s) / t


def epoch_staleness(gamma: float) -> float:
    """``gamma / (1 + gamma)``: Lemma 11 over a whole epoch ``[t_i, t_{i+1})`` of BBScheduler.

    Within the epoch ``t <= t_{i+1} - 1 < n0 (1+gamma)^(i+1)`` (a ceiling minus one is below its
    argument) and ``t_i >= n0 (1+gamma)^i``, so ``(t - t_i)/t = 1 - t_i/t < 1 - 1/(1+gamma)``:
    the ceilings cost nothing. No privacy schedule ``eps_i`` removes this floor: it comes from the
    epochs' fixed growth factor (rerun times growing polynomially would make it vanish).
    """
    gamma = check.positive(gamma, "gamma")
    return gamma / (1 + gamma)


def bbscheduler_effective_size(epsilon: float, gamma: float, n0: int) -> float:
    """``eps gamma n0 / (1 + gamma)``: a lower bound on ``eps_i t_i`` for every epoch of the pure
    schedule ``eps_i = eps gamma / (1+gamma)^(i+1)``, ``t_i = ceil(n0 (1+gamma)^i)`` (Theorem 10).
    A black box whose error depends on ``eps n`` runs at least as well as on this product."""
    epsilon = check.positive(epsilon, "epsilon")
    gamma = check.positive(gamma, "gamma")
    n0 = check.integer(n0, "n0", minimum=1)
    return epsilon * gamma * n0 / (1 + gamma)


def bbscheduler_error_bound(blackbox_error: float, gamma: float) -> float:
    """Theorem 10 (our form): BBScheduler's error at any time is at most the black box's error in
    the current epoch plus the epoch's staleness ``gamma/(1+gamma)`` (Lemma 11), with probability
    ``1 - beta`` for all times at once (``beta_i = 6 beta / (pi^2 (i+1)^2)``)."""
    return check.nonnegative(blackbox_error, "blackbox_error") + epoch_staleness(gamma)


def bbscheduler_laplace_noise(
    k: int, epsilon: float, gamma: float, n0: int, beta: float = 0.05
) -> float:
    """The Laplace black box's error bound in BBScheduler's first epoch (Theorem 10, our form).

    The box (:class:`dpteach.growing.LaplaceBox`) answers ``k`` queries with ``Lap(k/(t eps_i))``
    each (L1 sensitivity ``k/t``); epoch 0 runs at ``t_0 = n0`` with ``eps_0 = eps gamma/(1+gamma)``
    and ``beta_0 = 6 beta / pi^2``, so w.p. ``1 - beta_0`` its max error is at most
    ``k (1+gamma) ln(k/beta_0) / (eps gamma n0)`` (:func:`laplace_max_error`). Later epochs have
    ``eps_i t_i`` at least as large and a ``ln(1/beta_i)`` larger by ``2 ln(i+1)``.
    """
    k = check.integer(k, "k", minimum=1)
    beta0 = 6 * check.probability(beta, "beta") / math.pi**2
    effective = bbscheduler_effective_size(epsilon, gamma, n0)  # eps_0 t_0, validates the rest
    return k * (math.log(k) - math.log(beta0)) / effective


def bbscheduler_balanced_gamma(k: int, epsilon: float, n0: int, beta: float = 0.05) -> float:
    """The ``gamma`` at which BBScheduler's two error terms meet, with the Laplace black box.

    The noise bound :func:`bbscheduler_laplace_noise` falls with ``gamma`` like
    ``(1+gamma)/gamma`` and the staleness floor :func:`epoch_staleness` ``gamma/(1+gamma)`` rises:
    with ``u = gamma/(1+gamma)`` they are equal at ``u^2 = k ln(k/beta_0) / (eps n0)``, so
    ``gamma* = u/(1-u)``. Below ``gamma*`` the noise dominates, above it the staleness floor does
    (under adversarial growth, which reaches the floor). ``inf`` when ``u >= 1``: then the noise
    dominates at every ``gamma``. It grows as ``eps n0`` shrinks, like ``(eps n0)^(-1/2)``.
    """
    k = check.integer(k, "k", minimum=1)
    n0 = check.integer(n0, "n0", minimum=1)
    beta0 = 6 * check.probability(beta, "beta") / math.pi**2
    u = math.sqrt(k * (math.log(k) - math.log(beta0)) / (check.positive(epsilon, "epsilon") * n0))
    return math.inf if u >= 1 else u / (1 - u)


def pmwg_potential_increase(domain_size: int, t: int, potential: float = 0.0) -> float:
    """Lemma 15 (our form): the potential's rise when an entry arrives at size ``t``.

    PMWG mixes its histogram with the uniform ``u``: ``p_hat' = (t p_hat + u)/(t+1)``. Then
    ``D(x_{t+1} || p_hat') - D(x_t || p_hat) <= (ln|X| - D(x_t || p_hat)) / (t + 1)``, at most
    ``ln|X| / (t + 1)``. Proof: ``x_{t+1} = (t x_t + e_j)/(t+1)``, joint convexity of the KL
    divergence gives ``D(x_{t+1} || p_hat') <= (t/(t+1)) D(x_t || p_hat) + D(e_j || u)/(t+1)``,
    and ``D(e_j || u) = ln|X|``. ``potential`` is ``D(x_t || p_hat)`` before the arrival.
    """
    size = check.integer(domain_size, "domain_size", minimum=1)
    t = check.integer(t, "t", minimum=1)
    return (math.log(size) - check.nonnegative(potential, "potential")) / (t + 1)


def pmwg_hard_query_bound(domain_size: int, alpha: float, t: int, n0: int) -> float:
    """Corollary 16 (our form): the number of hard queries PMWG answers by time ``t``.

    If every hard query has true error at least ``3 alpha / 4`` and every hard answer is within
    ``alpha/4`` of the truth, each MW step (``eta = alpha/2``) lowers the potential by at least
    ``alpha^2 / 8``. The potential starts at most ``ln|X|`` and (Lemma 15) rises by at most
    ``ln|X| / (s + 1)`` per arrival, so the number of hard queries by time ``t`` is at most
    ``(8 ln|X| / alpha^2) (1 + H_t - H_{n0})`` (``H`` the harmonic numbers), about
    ``(8 ln|X| / alpha^2)(1 + ln(t / n0))``: it grows only logarithmically with the data.
    """
    from scipy import special

    size = check.integer(domain_size, "domain_size", minimum=1)
    alpha = check.positive(alpha, "alpha")
    t = check.integer(t, "t", minimum=1)
    n0 = check.integer(n0, "n0", minimum=1)
    if t < n0:
        raise ValueError(f"t must be at least n0={n0}, got {t}")
    harmonic = float(special.digamma(t + 1) - special.digamma(n0 + 1))  # H_t - H_{n0}
    return 8 * math.log(size) / alpha**2 * (1 + harmonic)


def pmwg_worst_case_epsilon(scale: float, domain_size: int, alpha: float, n0: int) -> float:
    """The most PMWG can spend over an unbounded stream with noise scale ``scale`` (our form).

    A sparse-vector instance starting at time ``s`` costs ``4 / (s scale)`` and a hard answer at
    time ``t`` costs ``1 / (t scale)``; PMWG never answers more hard queries by time ``t`` than
    ``B(t)`` = :func:`pmwg_hard_query_bound`. So the ``k``-th hard query comes at the earliest at
    ``tau_k = min{t : B(t) >= k}``, and the total is at most ``(4/n0 + 5 sum_k 1/tau_k) / scale``
    with ``sum_k 1/tau_k <= c (1/n0 + zeta(2, n0 + 1))``, ``c = 8 ln|X| / alpha^2`` (Abel
    summation of ``floor(B(t))`` against ``1/t - 1/(t+1)``): about ``(4 + 10 c) / (n0 scale)``.
    """
    from scipy import special

    scale = check.positive(scale, "scale")
    size = check.integer(domain_size, "domain_size", minimum=1)
    alpha = check.positive(alpha, "alpha")
    n0 = check.integer(n0, "n0", minimum=1)
    c = 8 * math.log(size) / alpha**2
    inverse_times = c * (1 / n0 + float(special.zeta(2, n0 + 1)))
    return (4 / n0 + 5 * inverse_times) / scale


def pmwg_noise_scale(epsilon: float, domain_size: int, alpha: float, n0: int) -> float:
    """The noise scale at which :func:`pmwg_worst_case_epsilon` equals ``epsilon``.

    With it PMWG can never exhaust its budget, however long the stream; but it is large unless
    ``n0 eps alpha^2 >> ln|X|``. Smaller scales answer better and refuse once the budget is spent.
    """
    epsilon = check.positive(epsilon, "epsilon")
    return pmwg_worst_case_epsilon(1.0, domain_size, alpha, n0) / epsilon


# --- Median mechanism and stability (Stemmer, Lecture 4) ----------------------------------------


def claim1_subsample_size(k: int, alpha: float) -> float:
    """``n' = ln(4k) / (2 alpha^2)`` (Lecture 4, Claim 1): a subsample of ``n'`` records drawn with
    replacement answers all ``k`` queries within ``alpha`` with probability ``>= 1/2``
    (Hoeffding, ``P[|q(S') - q(S)| > alpha] <= 2 e^{-2 n' alpha^2}``, and a union bound over
    ``k``: ``2k / (4k) = 1/2``)."""
    k = check.integer(k, "k", minimum=1)
    return math.log(4 * k) / (2 * check.positive(alpha, "alpha") ** 2)


def claim1_alpha(k: int, n_prime: int) -> float:
    """``alpha = sqrt(ln(4k) / (2 n'))``: Claim 1 solved for ``alpha`` (Lecture 4)."""
    k = check.integer(k, "k", minimum=1)
    n_prime = check.integer(n_prime, "n_prime", minimum=1)
    return math.sqrt(math.log(4 * k) / (2 * n_prime))


def median_premise_eta(k: int, domain_size: int, n_prime: int) -> float:
    """The smallest ``eta`` for which the halving argument's requirement (Lecture 4, proof of
    Theorem 2) holds for *every* sample and every ``k`` statistical queries when the candidates
    are all databases of ``n'`` records: some candidate ``S*`` within ``eta/4`` of the sample on
    every query.

    Two ways to find one: Claim 1 (``n' >= ln(4k) / (2 (eta/4)^2)``, whatever ``|X|``), and
    rounding, which needs no ``k``: round ``n' p_S`` to integers, up at the ``r`` largest
    fractional parts (``r`` = their sum); the errors ``e`` sum to 0, so ``|<q, e>| <= sum of e^+``
    for ``q`` in ``[0, 1]^X``, and that is the sum of the ``|X| - r`` smallest fractional parts over
    ``n'``, at most ``r (|X| - r) / (|X| n') <= floor(|X|^2 / 4) / (|X| n')``. So
    ``eta = 4 min(floor(|X|^2/4) / (|X| n'), sqrt(ln(4k) / (2 n')))``. Below it the premise is
    not guaranteed (the rounding bound is attained when every ``n' p_x`` is half an odd integer,
    on an even ``|X|``)."""
    size = check.integer(domain_size, "domain_size", minimum=1)
    n_prime = check.integer(n_prime, "n_prime", minimum=1)
    rounding = (size * size // 4) / (size * n_prime)
    return 4 * min(rounding, claim1_alpha(k, n_prime))


def median_eta(k: int, n: int) -> float:
    """``eta = (ln(4k) / (2n))^{1/4}``: the median mechanism's accuracy parameter (Lecture 4); its
    answers are within ``eta`` of the sample while GuessAndCheck has not halted (Theorem 2)."""
    k = check.integer(k, "k", minimum=1)
    n = check.integer(n, "n", minimum=1)
    return (math.log(4 * k) / (2 * n)) ** 0.25


def median_subsample_size(k: int, n: int) -> int:
    """``n' = ceil(8 ln(4k) / eta^2) = ceil(8 sqrt(2 n ln(4k)))`` (Lecture 4, with the arithmetic
    corrected: the text's ``8 sqrt(ln 4k) 2n`` is off by a factor ``sqrt(2n)``). It is Claim 1's
    size for accuracy ``eta/4``."""
    eta = median_eta(k, n)
    return math.ceil(8 * math.log(4 * k) / eta**2 - 1e-9)  # - 1e-9: round-off of exact integers


def median_guesses(k: int, n: int, domain_size: int) -> float:
    """``m = n' log2 |X| = log2 |X^{n'}|``: the lecture's bound on the wrong guesses (Lecture 4;
    base 2, since it counts halvings of ``S_0 = X^{n'}``)."""
    size = check.integer(domain_size, "domain_size", minimum=2)
    return median_subsample_size(k, n) * math.log2(size)


def median_log10_candidates(k: int, n: int, domain_size: int) -> float:
    """``log10 |S_0| = n' log10 |X|``: the size of the lecture's candidate set, in digits."""
    return median_guesses(k, n, domain_size) * math.log10(2)


def median_error_rate(k: int, n: int, domain_size: int, beta: float = 0.05) -> float:
    """``(ln k)^{3/4} sqrt(ln(|X| / beta)) / n^{1/4}``: Theorem 2's rate for the median mechanism
    (Lecture 4), without its constants and logarithmic factors (the ``O~``)."""
    k = check.integer(k, "k", minimum=2)
    n = check.integer(n, "n", minimum=1)
    size = check.integer(domain_size, "domain_size", minimum=2)
    beta = check.probability(beta, "beta")
    return math.log(k) ** 0.75 * math.sqrt(math.log(size / beta)) / n**0.25


def median_compression_bound(k: int, n: int, domain_size: int, beta: float = 0.05) -> float:
    """``sqrt((m ln(k n / m) + ln(1/beta)) / n)`` with the lecture's ``m = n' log2 |X|``: the first
    step of Theorem 2's proof (Lecture 4; the compression bound of the previous lecture) with its
    ``O(.)`` constant set to 1, natural logarithms. Above 1 it says nothing about queries valued in
    ``[0, 1]``; the constant of the ``O(.)`` is unknown, so this is not a bound, only its size."""
    k = check.integer(k, "k", minimum=1)
    n = check.integer(n, "n", minimum=1)
    beta = check.probability(beta, "beta")
    m = median_guesses(k, n, domain_size)
    return math.sqrt((m * math.log(max(k * n / m, 1.0)) + math.log(1 / beta)) / n)


def private_median_failure_bound(n: int, k: int, m: int, eta: float, epsilon: float) -> float:
    """A bound on the probability that the private median mechanism's analysis fails: that some
    sparse-vector noise exceeds ``eta/8`` or some Laplace answer is more than ``eta/4`` off.

    :class:`~dpteach.median.PrivateGuessAndCheck` at ``epsilon`` with cutoff ``m`` and sensitivity
    ``1/n`` draws at most ``m`` thresholds with noise ``Lap(s)``, ``s = 4m / (epsilon n)``, one
    query noise ``Lap(2s)`` for each of the ``k`` queries and at most ``m`` answers with
    ``Lap(2m / (epsilon n))``; a union bound gives ``2m e^{-eta/(8s)} + 2k e^{-eta/(16s)} +
    2m e^{-eta epsilon n / (8m)}``, scales widened by ``1 + 2^-10`` and tails doubled to cover the
    package's discrete, floating-point-safe noise (two-sided tails of a discrete Laplace are at
    most twice the continuous ones). Outside that event every flagged guess is more than
    ``3 eta/4`` off and every accepted one within ``5 eta/4`` (Lecture 4's analysis with these
    margins); the grid snapping of the values (far below ``eta``) is not counted."""
    n = check.integer(n, "n", minimum=1)
    k = check.integer(k, "k", minimum=1)
    m = check.integer(m, "m", minimum=1)
    eta = check.positive(eta, "eta")
    epsilon = check.positive(epsilon, "epsilon")
    widen = 1 + 2**-10
    s = widen * 4 * m / (epsilon * n)
    b = widen * 2 * m / (epsilon * n)
    return min(
        1.0,
        2 * m * math.exp(-eta / (8 * s))
        + 2 * k * math.exp(-eta / (16 * s))
        + 2 * m * math.exp(-eta / (4 * b)),
    )


def private_median_onset(k: int, m: int, eta: float, epsilon: float, beta: float = 0.05) -> int:
    """The smallest sample size ``n`` at which :func:`private_median_failure_bound` is at most
    ``beta``: from there on, with probability ``>= 1 - beta``, the private median mechanism's
    noise stays within the halving argument's margins (Lecture 4's analysis, on the private
    route), so every flagged guess halves the candidates and ``S*`` survives if it exists. Below
    it nothing is promised: noise can flag correct guesses and move answers away from ``S*``, and
    GuessAndCheck may halt after ``m`` flags. Grows like ``m ln(k + m) / (epsilon eta)``."""
    k = check.integer(k, "k", minimum=1)
    m = check.integer(m, "m", minimum=1)
    eta = check.positive(eta, "eta")
    epsilon = check.positive(epsilon, "epsilon")
    beta = check.probability(beta, "beta")
    high = 1  # the bound falls as n grows: double, then bisect on the integers
    while private_median_failure_bound(high, k, m, eta, epsilon) > beta:
        high *= 2
    low = high // 2  # the bound exceeds beta at low (or low = 0)
    while high - low > 1:
        mid = (low + high) // 2
        if private_median_failure_bound(mid, k, m, eta, epsilon) <= beta:
            high = mid
        else:
            low = mid
    return high


def laplace_density_ratio_bound(lam: float, b: float) -> float:
    """``e^{lambda / b}``: Claim 3 (Lecture 4) bounds ``h_{mu', b}(y) / h_{mu, b}(y)`` within
    ``[e^{-lambda/b}, e^{lambda/b}]`` for ``|mu - mu'| <= lambda``, for every ``y``."""
    return math.exp(check.nonnegative(lam, "lam") / check.positive(b, "b"))


def laplace_tail(delta: float, epsilon: float, n: int) -> float:
    """``P[|Y| > Delta] = exp(-epsilon n Delta)`` for ``Y ~ Lap(1 / (epsilon n))`` (Lecture 4,
    Claim 6; exact, each side contributing half)."""
    delta = check.nonnegative(delta, "delta")
    epsilon = check.positive(epsilon, "epsilon")
    n = check.integer(n, "n", minimum=1)
    return math.exp(-epsilon * n * delta)


def laplace_privacy_loss(y: object, mu: float, mu_prime: float, b: float) -> np.ndarray:
    """The privacy loss ``ln(h_{mu,b}(y) / h_{mu',b}(y)) = (|y - mu'| - |y - mu|) / b`` of a
    Laplace output ``y`` (Lecture 4, Claim 3: within ``[-lambda/b, lambda/b]``,
    ``lambda = |mu - mu'|``). Losses of composed mechanisms add (Theorems 7, 8)."""
    y = check.array(y, "y")
    mu, mu_prime = check.real(mu, "mu"), check.real(mu_prime, "mu_prime")
    return (np.abs(y - mu_prime) - np.abs(y - mu)) / check.positive(b, "b")


# --- Reconstruction (chapter 06; Dinur and Nissim 2003) ------------------------------------------


def reconstruction_bound(epsilon: float) -> float:
    """``e^eps / (1 + e^eps)``: the largest expected fraction of a uniformly random secret
    ``d`` in ``{0, 1}^n`` that *any* attacker recovers from an ``epsilon``-DP release
    (replace-one neighbours: one person's bit changes).

    For each person ``i``, fix the other bits: the release on ``d_i = 0`` and on ``d_i = 1`` are
    ``epsilon``-indistinguishable, and a test between two such distributions with prior 1/2 is
    right with probability at most ``e^eps / (1 + e^eps)`` (the best event ``S`` has
    ``P_0(S) = e^eps / (1 + e^eps)``, ``P_1(S) = 1 / (1 + e^eps)``); average over ``i``.
    ``epsilon`` is the guarantee of the whole release (for ``m`` answers at ``eps_q`` each, at
    most ``m eps_q``). Chapter 06, Theorem 4.
    """
    return 1 / (1 + math.exp(-check.nonnegative(epsilon, "epsilon")))


def exhaustive_attack_bound(error: float) -> float:
    """``4 E``: the most bits in which any database consistent with answers within ``E`` to all
    ``2^n`` subset sums differs from the secret (Dinur and Nissim 2003; Dwork-Roth §8.1;
    chapter 06, Theorem 1). Attained when ``2E`` is an integer:
    :func:`dpteach.reconstruction.decoy_answers`."""
    return 4 * check.nonnegative(error, "error")


def lp_decoding_heuristic(error: float, m: int) -> float:
    """``Phi(sqrt(m) / (4 E))``: a *heuristic* (no theorem) for the fraction of bits LP decoding
    recovers from ``m`` random subset sums with independent noise uniform on ``[-E, E]``.

    LP decoding is least-absolute-deviations regression; for ``m`` much larger than ``n`` its
    estimate is approximately normal with covariance ``Sigma^-1 / (4 f(0)^2 m)`` (``f`` the
    noise density, ``f(0) = 1/(2E)``; ``Sigma = E[q q^T] = (I + 1 1^T)/4`` for fair 0/1 queries,
    whose inverse has diagonal ``4n/(n+1)``, about 4), so each ``x_i`` is off by about
    ``N(0, 4E^2/m)`` and lands on the right side of 1/2 with probability ``Phi(sqrt(m)/(4E))``.
    The box ``0 <= x <= 1`` and ``m`` near ``n`` are ignored. In units of ``sqrt(n)``:
    ``Phi(sqrt(m/n) / (4 E/sqrt(n)))``, so the heuristic's collapse moves like ``sqrt(m/n)``; the
    measured one fits it for ``m/n <= 2`` and moves faster beyond, where the heuristic is
    pessimistic. Chapter 06, Exercise 3.
    """
    error = check.nonnegative(error, "error")
    m = check.integer(m, "m", minimum=1)
    if error == 0:
        return 1.0
    return float(special.ndtr(math.sqrt(m) / (4 * error)))


# --- Chapter 00: the Gaussian baseline's expected max error --------------------------------------


def gaussian_expected_max_error(k: int, n: int, epsilon: float, delta: float) -> float:
    """``E[max_i |N(0, sigma^2)_i|]`` over ``k`` i.i.d. coordinates, with the ``sigma`` of the
    Gaussian baseline (L2 sensitivity ``sqrt(k)/n``, :func:`~dpteach.mechanisms.gaussian_sigma`):
    the exact mean, ``sigma * int_0^inf (1 - (2 Phi(t) - 1)^k) dt``, computed by quadrature (not a
    bound). The baseline's discrete Gaussian lives on a grid of spacing at most ``1 / (2^11 n)``;
    whenever ``sigma >= 1/n`` it matches the continuous one far below any Monte-Carlo error."""
    from scipy import integrate, special

    k, n, epsilon, _ = _common(k, n, epsilon, 0.5)
    sigma = gaussian_sigma(math.sqrt(k) / n, epsilon, delta)
    # 1 - (1 - 2 Phi(-t))^k, written with log1p/expm1 so that it stays accurate in the far tail
    tail = lambda t: -math.expm1(k * math.log1p(-2 * special.ndtr(-t)))  # noqa: E731
    return sigma * integrate.quad(tail, 0, 40, limit=200)[0]


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


#: :func:`multiset_count` computes counts of at most this many decimal digits exactly (beyond,
#: ``math.comb`` alone takes seconds to hours); :func:`log_multiset_count` has no limit.
MAX_COUNT_DIGITS = 10_000


def log_multiset_count(domain_size: int, m: int) -> float:
    """``ln C(|X| + m - 1, m)`` from ``lgamma`` (relative accuracy about 1e-15; instant for any
    size): the estimate every size check uses before it computes anything."""
    size = check.integer(domain_size, "domain_size", minimum=1)
    m = check.integer(m, "m", minimum=1)
    return math.lgamma(size + m) - math.lgamma(m + 1) - math.lgamma(size)


def multiset_count(domain_size: int, m: int) -> int:
    """``C(|X| + m - 1, m)``: the number of databases of ``m`` records over ``|X|`` cells, as
    multisets (the ordered tuples ``X^m`` number ``|X|^m``), exactly.

    Refused (``ValueError``) when the count has more than :data:`MAX_COUNT_DIGITS` digits, found
    by :func:`log_multiset_count` before anything is computed; use that function for its size.
    """
    digits = log_multiset_count(domain_size, m) / math.log(10)
    if digits > MAX_COUNT_DIGITS:
        raise ValueError(
            f"C(|X| + m - 1, m) for domain_size={domain_size}, m={m} is about 10^{digits:.0f}, "
            f"more than {MAX_COUNT_DIGITS:,} digits; use log_multiset_count for its logarithm"
        )
    return math.comb(int(domain_size) + int(m) - 1, int(m))


def smalldb_candidates(domain_size: int, m: int) -> int:
    """``C(|X| + m - 1, m)``: the number of databases of ``m`` records over ``X`` (multisets),
    at most ``|X|^m``; refused (``ValueError``, from an ``lgamma`` estimate, instantly) beyond
    10,000 digits (:func:`multiset_count`)."""
    return multiset_count(domain_size, m)


def log_smalldb_candidates(domain_size: int, m: int) -> float:
    """``ln C(|X| + m - 1, m)`` (:func:`log_multiset_count`): instant for any
    size, where :func:`smalldb_candidates` refuses counts of more than 10,000 digits."""
    return log_multiset_count(domain_size, m)


def smalldb_max_error(
    domain_size: int, k: int, n: int, epsilon: float, alpha: float, beta: float = 0.05
) -> float:
    """Max error of SmallDB w.p. ``>= 1 - beta``: ``alpha + 2 ln(C / beta) / (eps n)``.

    Some candidate of ``m = smalldb_size(k, alpha)`` records has error at most ``alpha``
    (:func:`smalldb_size`, for ``k >= 3``); the exponential mechanism over the ``C`` candidates
    (score sensitivity ``1/n``) loses at most ``2 ln(C/beta) / (eps n)`` (Dwork-Roth Thm 3.11).
    """
    k, n, epsilon, beta = _common(k, n, epsilon, beta)
    log_count = log_smalldb_candidates(domain_size, smalldb_size(k, alpha))
    return alpha + 2 * (log_count - math.log(beta)) / (epsilon * n)


def sigma_eps_delta(epsilon: float, delta: float, calibration: str = "analytic") -> float:
    """The lecture's ``sigma_{eps,delta}``: the Gaussian mechanism's noise multiplier, so that
    ``N(0, sigma_{eps,delta}^2 m / n^2)`` per answer is ``(eps, delta)``-DP for ``m`` queries
    (L2 sensitivity ``sqrt(m)/n``). It is :func:`~dpteach.mechanisms.gaussian_sigma` at
    sensitivity 1 (sigma scales linearly with the sensitivity); ``O(sqrt(ln(1/delta)) / eps)``."""
    return gaussian_sigma(1.0, epsilon, delta, calibration=calibration)


def gaussian_average_error(
    m: int, n: int, epsilon: float, delta: float, calibration: str = "analytic"
) -> float:
    """Average error (Definition 4) of the Gaussian mechanism *without* projection, exactly:
    ``sqrt(E ||W||^2 / m) = sigma_{eps,delta} sqrt(m) / n``. Grows like ``sqrt(m)``."""
    m = check.integer(m, "m", minimum=1)
    n = check.integer(n, "n", minimum=1)
    return sigma_eps_delta(epsilon, delta, calibration) * math.sqrt(m) / n


def gaussian_width_bound(m: int, domain_size: int, radius: float | None = None) -> float:
    """``l*(K_Q) <= R sqrt(2 ln|X|) <= sqrt(2 m ln|X|)`` (the clean form of the lecture's bound).

    ``h_K(g) = max_{r in X} <g, Q(r)>`` is a max of ``|X|`` Gaussians with variances
    ``||Q(r)||^2 <= R^2 <= m`` (facts 1 and 2). For any ``lambda > 0``, by Jensen,
    ``exp(lambda E max) <= E exp(lambda max) <= sum_r E exp(lambda <g, Q(r)>)
    <= |X| e^{lambda^2 R^2/2}``, so ``E max <= ln|X| / lambda + lambda R^2 / 2``;
    ``lambda = sqrt(2 ln|X|) / R`` gives the bound.
    ``radius`` is ``R`` (default ``sqrt(m)``, fact 1).
    """
    m = check.integer(m, "m", minimum=1)
    size = check.integer(domain_size, "domain_size", minimum=1)
    r = math.sqrt(m) if radius is None else check.positive(radius, "radius")
    return r * math.sqrt(2 * math.log(size))


def gaussian_width_bound_lecture(m: int, domain_size: int) -> float:
    """The bound the notes' integral yields, ``sqrt(m) (sqrt(pi/2) + 2 ln|X|)``: valid (for
    ``ln|X| >= 1/2`` the split point ``2 sqrt(m) ln|X|`` exceeds ``sqrt(2 m ln|X|)``) but linear in
    ``ln|X|``, so it does not give ``O(sqrt(m ln|X|))``; :func:`gaussian_width_bound` does."""
    m = check.integer(m, "m", minimum=1)
    size = check.integer(domain_size, "domain_size", minimum=1)
    return math.sqrt(m) * (math.sqrt(math.pi / 2) + 2 * math.log(size))


def projection_average_error(
    width: float, m: int, n: int, epsilon: float, delta: float, calibration: str = "analytic"
) -> float:
    """Theorem 9 with its constant: the projection mechanism's average error is at most
    ``sqrt(2 sigma_{eps,delta} l*(K_Q) / (n sqrt(m)))``, and never more than without projection.

    Proof (the notes state it without one). Let ``y = Q(x)``, ``y_tilde = y + W``,
    ``W = s g`` with ``s = sigma_{eps,delta} sqrt(m) / n``. Because ``y_hat`` is the projection
    onto the convex ``K_Q`` and ``y`` is in ``K_Q``, ``<y_tilde - y_hat, y - y_hat> <= 0`` (the
    angle at ``y_hat`` is obtuse). Hence ``||y_hat - y||^2 = <y_hat - y_tilde, y_hat - y> +
    <W, y_hat - y> <= <W, y_hat - y> <= h_K(W) + h_K(-W)``, and in expectation
    ``E ||y_hat - y||^2 <= 2 s l*(K_Q)`` (``-g`` is distributed as ``g``). Divide by ``m``.
    Also ``||y_hat - y|| <= ||y_tilde - y||`` (projection never hurts), so the result is capped
    by :func:`gaussian_average_error`.
    """
    width = check.nonnegative(width, "width")
    m = check.integer(m, "m", minimum=1)
    n = check.integer(n, "n", minimum=1)
    sigma = sigma_eps_delta(epsilon, delta, calibration)
    projected = math.sqrt(2 * sigma * width / (n * math.sqrt(m)))
    return min(projected, gaussian_average_error(m, n, epsilon, delta, calibration))


def projection_crossover_n(
    m: int,
    domain_size: int,
    epsilon: float,
    delta: float,
    radius: float | None = None,
    calibration: str = "analytic",
) -> float:
    """The ``n`` below which Theorem 9's bound is below the exact average error without
    projection: ``sqrt(2 sigma l* / (n sqrt(m))) < sigma sqrt(m) / n`` exactly when
    ``n < sigma m^{3/2} / (2 l*)``, with ``l* <= R sqrt(2 ln|X|)`` (:func:`gaussian_width_bound`;
    ``R = sqrt(m)`` by default, which gives ``sigma m / (2 sqrt(2 ln|X|))``, chapter 03's
    Exercise 4). Their ratio is ``sqrt(n / crossover)``: at a quarter of it the theorem promises
    half the error, far above it the noise is too small to leave ``K_Q`` and projection changes
    little. Grows linearly in ``m`` and like ``1 / epsilon``."""
    m = check.integer(m, "m", minimum=1)
    width = gaussian_width_bound(m, domain_size, radius)
    if width == 0:  # |X| = 1: K_Q is a point, projection removes every error
        return math.inf
    return sigma_eps_delta(epsilon, delta, calibration) * m**1.5 / (2 * width)


def projection_error_ratio(
    m: int, n: int, domain_size: int, epsilon: float, delta: float, calibration: str = "analytic"
) -> float:
    """A bound on how much error the projection leaves: ``sqrt(E ||y_hat - y||^2 / E ||W||^2) <=
    min(1, sqrt(d / m), sqrt(n / crossover))`` with ``d = min(m, |X| - 1)`` and ``crossover`` =
    :func:`projection_crossover_n` (width bound ``sqrt(2 m ln|X|)``).

    Three reasons. Projection never hurts (1). ``K_Q`` lies in an affine subspace ``A`` of
    dimension ``d``, and projecting onto ``K_Q`` is projecting onto ``A`` and then onto ``K_Q``,
    which is 1-Lipschitz and fixes ``y``: so ``||y_hat - y|| <= ||P W||`` with ``P`` the
    orthogonal projection onto the ``d``-dimensional direction space of ``A``, and ``E ||P W||^2 =
    d s^2`` against ``E ||W||^2 = m s^2`` (``sqrt(d/m)``; whatever ``n``). Theorem 9 gives
    ``E ||y_hat - y||^2 <= 2 s l*`` with ``s = sigma sqrt(m) / n``, a ratio ``sqrt(n /
    crossover)``. Below 1/2 the projection is guaranteed to remove at least half the error."""
    m = check.integer(m, "m", minimum=1)
    n = check.integer(n, "n", minimum=1)
    size = check.integer(domain_size, "domain_size", minimum=1)
    dimension = min(m, size - 1)
    crossover = projection_crossover_n(m, size, epsilon, delta, calibration=calibration)
    return min(1.0, math.sqrt(dimension / m), math.sqrt(n / crossover))


def projection_sample_size(
    width: float, m: int, alpha: float, epsilon: float, delta: float, calibration: str = "analytic"
) -> float:
    """Theorem 9's ``n``: average error at most ``alpha`` once
    ``n >= 2 sigma_{eps,delta} l*(K_Q) / (alpha^2 sqrt(m))``. In the lecture's form
    ``c_1 l* sqrt(ln(1/delta)) / (alpha^2 eps sqrt(m))`` that is :func:`theorem9_c1`."""
    width = check.nonnegative(width, "width")
    m = check.integer(m, "m", minimum=1)
    alpha = check.positive(alpha, "alpha")
    return 2 * sigma_eps_delta(epsilon, delta, calibration) * width / (alpha**2 * math.sqrt(m))


def theorem9_c1(epsilon: float, delta: float, calibration: str = "analytic") -> float:
    """Theorem 9's ``c_1 = 2 eps sigma_{eps,delta} / sqrt(ln(1/delta))``. With the classic
    calibration ``sigma_{eps,delta} = sqrt(2 ln(1.25/delta)) / eps`` this is
    ``2 sqrt(2 ln(1.25/delta) / ln(1/delta))``, which tends to ``2 sqrt(2)`` as ``delta -> 0``.
    ``c_2 = c_1 E||g|| / sqrt(m)``, between ``c_1 / sqrt(2)`` and ``c_1``, since
    ``l* = E||g|| M*``."""
    epsilon = check.positive(epsilon, "epsilon")
    log_term = math.log(1 / check.delta(delta, allow_zero=False))
    return 2 * epsilon * sigma_eps_delta(epsilon, delta, calibration) / math.sqrt(log_term)


def projection_sample_size_simple(
    domain_size: int, alpha: float, epsilon: float, delta: float, calibration: str = "analytic"
) -> float:
    """Theorem 5's ``n``: Theorem 9 with ``l* <= sqrt(2 m ln|X|)``, i.e.
    ``n >= 2 sqrt(2 ln|X|) sigma_{eps,delta} / alpha^2`` — no dependence on ``m``. The lecture's
    ``c`` is ``sqrt(2) c_1`` (:func:`theorem9_c1`), ``4`` in the classic small-delta limit."""
    size = check.integer(domain_size, "domain_size", minimum=2)
    return projection_sample_size(math.sqrt(2 * math.log(size)), 1, alpha, epsilon, delta,
                                  calibration)  # fmt: skip


def laplace_sample_size(k: int, alpha: float, epsilon: float, beta: float = 0.05) -> float:
    """Recap item 2: ``n >= k ln(k / beta) / (eps alpha)`` makes the Laplace mechanism's max
    error at most ``alpha`` w.p. ``1 - beta`` (:func:`laplace_max_error`);
    ``O(k log k / (alpha eps))``."""
    k, _, epsilon, beta = _common(k, 1, epsilon, beta)
    return k * math.log(k / beta) / (epsilon * check.positive(alpha, "alpha"))


def gaussian_sample_size(
    k: int, alpha: float, epsilon: float, delta: float, beta: float = 0.05
) -> float:
    """Recap item 1: the ``n`` at which :func:`gaussian_max_error` equals ``alpha``:
    ``sigma_{eps,delta} sqrt(k) sqrt(2 ln(2k/beta)) / alpha``, i.e.
    ``O(sqrt(k log k) sqrt(log(1/delta)) / (alpha eps))``."""
    k, _, epsilon, beta = _common(k, 1, epsilon, beta)
    alpha = check.positive(alpha, "alpha")
    return sigma_eps_delta(epsilon, delta) * math.sqrt(k * 2 * math.log(2 * k / beta)) / alpha


def smalldb_sample_size(
    domain_size: int, k: int, alpha: float, epsilon: float, beta: float = 0.05
) -> float:
    """Recap item 3: SmallDB's max error is at most ``2 alpha`` w.p. ``1 - beta`` once
    ``n >= 2 ln(C / beta) / (eps alpha)`` (:func:`smalldb_max_error`), ``C`` the number of
    candidates; ``ln C <= m ln|X| = ln|X| ln k / alpha^2`` gives the lecture's
    ``O(log|X| log k / (alpha^3 eps))``. (``ln C`` is computed exactly, via log-gamma.)"""
    size = check.integer(domain_size, "domain_size", minimum=1)
    k, _, epsilon, beta = _common(k, 1, epsilon, beta)
    m = smalldb_size(k, alpha)
    log_count = math.lgamma(size + m) - math.lgamma(m + 1) - math.lgamma(size)
    return 2 * (log_count + math.log(1 / beta)) / (epsilon * alpha)


def recap_table(
    domain_size: int, k: int, alpha: float, epsilon: float, delta: float, beta: float = 0.05
) -> list[dict]:
    """The recap's four mechanisms at equal certified error: guarantee, the ``n`` each needs so that
    its max error is at most ``alpha`` w.p. ``1 - beta`` with our constants, the accuracy
    parameter it is run at (``run_alpha``), the lecture's order of growth and running time.

    Gaussian and Laplace certify ``alpha`` when run at ``alpha``; SmallDB certifies ``2 alpha``
    (:func:`smalldb_sample_size`), so it is run at ``alpha / 2``; chapter 04's offline private MW
    certifies ``3 alpha`` (:func:`private_mw_sample_size`), so it is run at ``alpha / 3``.
    MW has two rows: the ``(eps, delta)`` version the lecture's recap quotes (advanced composition
    over its rounds, ``O(sqrt(log|X|) log k sqrt(log 1/delta) / (alpha^2 eps))``, with
    ``ln(4kL/beta)`` for the notes' ``log k``, ``L = ceil(4 ln|X| / alpha^2)`` rounds), and the
    pure ``eps``-DP one (basic composition, ``O(log|X| log k / (alpha^3 eps))``).
    """
    alpha = check.positive(alpha, "alpha")
    return [
        {"mechanism": "Gaussian", "privacy": "(eps, delta)-DP", "run_alpha": alpha,
         "n": gaussian_sample_size(k, alpha, epsilon, delta, beta),
         "order": "sqrt(k log k) sqrt(log 1/delta) / (alpha eps)", "time": "O(k n)"},
        {"mechanism": "Laplace", "privacy": "eps-DP", "run_alpha": alpha,
         "n": laplace_sample_size(k, alpha, epsilon, beta),
         "order": "k log k / (alpha eps)", "time": "O(k n)"},
        {"mechanism": "SmallDB", "privacy": "eps-DP", "run_alpha": alpha / 2,
         "n": smalldb_sample_size(domain_size, k, alpha / 2, epsilon, beta),
         "order": "log|X| log k / (alpha^3 eps)", "time": "poly(|X|): |X|^(log k / alpha^2)"},
        {"mechanism": "MW (eps, delta): notes", "privacy": "(eps, delta)-DP",
         "run_alpha": alpha / 3,
         "n": private_mw_sample_size(domain_size, k, alpha / 3, epsilon, beta, delta),
         "order": "sqrt(log|X|) log k sqrt(log 1/delta) / (alpha^2 eps)",
         "time": "O(k n L |X|), L = O(log|X| / alpha^2)"},
        {"mechanism": "MW, pure DP", "privacy": "eps-DP", "run_alpha": alpha / 3,
         "n": private_mw_sample_size(domain_size, k, alpha / 3, epsilon, beta),
         "order": "log|X| log k / (alpha^3 eps)",
         "time": "O(k n L |X|), L = O(log|X| / alpha^2)"},
    ]  # fmt: skip


# --- Structured baselines: noisy marginal tables and the noisy histogram (chapters 00, 04, 06) --


def _max_abs_laplace(scale: float, k: int) -> float:
    """``E[max of k i.i.d. |Lap(scale)|] = scale H_k``: ``|Lap(b)|`` is exponential of mean ``b``,
    and the max of ``k`` i.i.d. exponentials has mean ``b (1 + 1/2 + ... + 1/k)`` (Renyi 1953;
    David and Nagaraja, *Order Statistics*, 2003, Sec. 2.5)."""
    if k <= 1000:
        harmonic = math.fsum(1 / i for i in range(1, k + 1))
    else:
        harmonic = float(special.digamma(k + 1)) + float(np.euler_gamma)
    return scale * harmonic


def _max_abs_gaussian(sigma: float, k: int) -> float:
    """``E[max of k i.i.d. |N(0, sigma^2)|] = sigma int_0^inf (1 - (2 Phi(t) - 1)^k) dt``, by
    quadrature (``E M = int P[M > t] dt`` for ``M >= 0``)."""
    from scipy import integrate

    tail = lambda t: -math.expm1(k * math.log1p(-2 * special.ndtr(-t)))  # noqa: E731
    return sigma * integrate.quad(tail, 0, 40, limit=200)[0]


def marginal_laplace_errors(k: int, tables: int, n: int, epsilon: float) -> tuple[float, float]:
    """Expected ``(mean, max)`` absolute error over the ``k`` cells of ``T = tables`` marginal
    tables released with ``Lap(2T/(n eps))`` per cell
    (:func:`dpteach.baselines.laplace_marginal_answers`, L1 sensitivity ``2T/n``): ``(b, b H_k)``
    with ``b = 2T/(n eps)``,
    exact for the continuous Laplace mechanism (the package's safe noise has a scale at most
    ``1 + 2^-10`` times larger). Against the naive baseline's ``b = k/(n eps)``
    (:func:`laplace_expected_max_error`), the structured one gains ``k/(2T)``: the average number of
    cells per table (``k/T``), halved."""
    k, n, epsilon, _ = _common(k, n, epsilon, 0.5)
    tables = check.integer(tables, "tables", minimum=1)
    scale = 2 * tables / (n * epsilon)
    return scale, _max_abs_laplace(scale, k)


def marginal_gaussian_errors(
    k: int, tables: int, n: int, epsilon: float, delta: float
) -> tuple[float, float]:
    """Expected ``(mean, max)`` absolute error over the ``k`` cells of ``T = tables`` marginal
    tables released with Gaussian noise of L2 sensitivity ``sqrt(2T)/n``
    (:func:`dpteach.baselines.gaussian_marginal_answers`): ``sigma sqrt(2/pi)`` and the exact
    mean of the max of ``k`` i.i.d. ``|N(0, sigma^2)|`` (quadrature), with ``sigma`` from
    :func:`~dpteach.mechanisms.gaussian_sigma`. Independent of the table sizes: the naive
    baseline's sigma (:func:`gaussian_expected_max_error`) is ``sqrt(k / (2T))`` times larger."""
    k, n, epsilon, _ = _common(k, n, epsilon, 0.5)
    tables = check.integer(tables, "tables", minimum=1)
    sigma = gaussian_sigma(math.sqrt(2 * tables) / n, epsilon, delta)
    return sigma * math.sqrt(2 / math.pi), _max_abs_gaussian(sigma, k)


def marginal_max_error(
    k: int, tables: int, n: int, epsilon: float, delta: float = 0.0, beta: float = 0.05
) -> float:
    """Max error over the ``k`` cells of ``T = tables`` marginal tables released at their true
    sensitivity, w.p. ``>= 1 - beta``: the structured baselines' form of
    :func:`laplace_max_error` (``delta = 0``, :func:`dpteach.baselines.laplace_marginal_answers`:
    ``(2T/(n eps)) ln(k/beta)``, a union bound, Dwork-Roth Thm 3.8) and of
    :func:`gaussian_max_error` (``delta > 0``, :func:`dpteach.baselines.gaussian_marginal_answers`:
    ``sigma sqrt(2 ln(2k/beta))``, ``sigma`` at L2 sensitivity ``sqrt(2T)/n``). The naive
    baselines' sensitivities ``k/n`` and ``sqrt(k)/n`` become ``2T/n`` and ``sqrt(2T)/n``."""
    k, n, epsilon, beta = _common(k, n, epsilon, beta)
    tables = check.integer(tables, "tables", minimum=1)
    if check.delta(delta) == 0:
        return 2 * tables / (n * epsilon) * (math.log(k) - math.log(beta))
    sigma = gaussian_sigma(math.sqrt(2 * tables) / n, epsilon, delta)
    return sigma * math.sqrt(2 * math.log(2 * k / beta))


def histogram_rms_error(cells: object, n: int, epsilon: float, delta: float = 0.0) -> np.ndarray:
    """Root-mean-square error of a query that sums ``cells`` cells of the noisy histogram
    (:func:`dpteach.baselines.laplace_histogram_answers`, ``delta = 0``:
    ``sqrt(2 c) 2/(n eps)``, the standard deviation of a sum of ``c`` i.i.d. ``Lap(2/(n eps))``;
    :func:`dpteach.baselines.gaussian_histogram_answers`, ``delta > 0``: ``sqrt(c) sigma`` with
    ``sigma`` at L2 sensitivity ``sqrt(2)/n``). Exact (the noise is unbiased); the error grows
    with the cells a query sums, ``|X| / |table|`` for a marginal query, not with ``k``."""
    c = check.array(cells, "cells")
    if np.any(c < 1):
        raise ValueError("cells must be at least 1 (a query sums at least one cell)")
    n = check.integer(n, "n", minimum=1)
    epsilon = check.positive(epsilon, "epsilon")
    delta = check.delta(delta)
    if delta == 0:
        return np.sqrt(2 * c) * 2 / (n * epsilon)
    return np.sqrt(c) * gaussian_sigma(math.sqrt(2) / n, epsilon, delta)


def histogram_errors(
    cells: object, counts: object, n: int, epsilon: float, delta: float = 0.0
) -> tuple[float, float]:
    """Approximate expected ``(mean, max)`` absolute error of a workload answered on the noisy
    histogram, whose queries come in groups: ``counts[i]`` queries that each sum ``cells[i]``
    cells (an ``l``-way marginal of ``d`` binary attributes: ``2^l C(d, l)`` queries of
    ``2^(d-l)`` cells). Each query's noise has the standard deviation ``s_i`` of
    :func:`histogram_rms_error`; both values treat it as ``N(0, s_i^2)`` (exact for Gaussian
    noise, the central limit for a sum of many Laplace cells), the mean as
    ``sqrt(2/pi) s_i`` averaged over the queries and the max as the largest group's expected max
    of ``counts[i]`` independent ``|N(0, s_i^2)|``. The cells of one table are sums over disjoint
    cells of the histogram, hence independent, but tables that share attributes overlap and are
    correlated, which lowers the true max: a normal approximation, not a bound, about 10 % high
    on chapter 06's map (``tests/test_landscape.py`` checks it against the measurements)."""
    c = check.array(cells, "cells", ndim=1)
    m = check.array(counts, "counts", ndim=1)
    if c.size == 0 or c.shape != m.shape or np.any(m < 1) or np.any(m != np.round(m)):
        raise ValueError("cells and counts must be equally long, non-empty, counts integers >= 1")
    s = histogram_rms_error(c, n, epsilon, delta)
    mean = float(np.sum(m * s) / np.sum(m) * math.sqrt(2 / math.pi))
    return mean, max(_max_abs_gaussian(float(si), int(mi)) for si, mi in zip(s, m))


def mwem_max_error_bound(domain_size: int, k: int, n: int, epsilon: float) -> float:
    """Hardt, Ligett and McSherry (2012), Theorem 2.2, normalised by ``n`` and minimised over the
    number of rounds ``T``: MWEM's max error over ``k`` queries is at most
    ``2 sqrt(ln|X| / T) + 10 T ln k / (n eps)`` with high probability (``1 - 2T/k^c``). The best
    ``T`` is about ``(n eps sqrt(ln|X|) / (10 ln k))^(2/3)``, and the bound then scales like
    ``(ln|X| ln k / (n eps))^(1/3)``. A worst-case bound for MWEM run one query at a time;
    :func:`dpteach.mw.mwem` measures whole marginals and uses fewer rounds
    (:func:`dpteach.mw.mwem_rounds`), for which it is indicative only."""
    size = check.integer(domain_size, "domain_size", minimum=2)
    k, n, epsilon, _ = _common(k, n, epsilon, 0.5)
    log_x, log_k = math.log(size), math.log(max(k, 2))
    best = (n * epsilon * math.sqrt(log_x) / (10 * log_k)) ** (2 / 3)
    candidates = {max(1, math.floor(best)), max(1, math.ceil(best))}
    return min(2 * math.sqrt(log_x / t) + 10 * t * log_k / (n * epsilon) for t in candidates)
